//! A structured output checked by the package's own validator (pydantic
//! in Python, a Standard Schema such as zod in JavaScript) inside the run,
//! so that what it refuses goes back to the model like the schema's
//! problems (`AgentBuilder::output_validator`). Both packages report
//! problems as `[{path, message}]`, the path made of keys and indexes.

use parlance::ArgumentProblem;
use parlance::PathStep;
use serde_json::Value;

/// The problems a package reported, as the lines the model reads (the
/// wording of invalid tool arguments: `/amount: must be at most 100`).
pub fn problem_lines(v: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = v else {
        return Err(format!(
            "the output validator's problems are not a list: {v}"
        ));
    };
    Ok(items
        .iter()
        .map(|item| {
            let steps = item["path"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            ArgumentProblem::new(
                steps.iter().map(PathStep::from_json),
                item["message"].as_str().unwrap_or("is not valid"),
            )
            .line()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_read_as_the_engines_lines() {
        let lines = problem_lines(&json!([
            {"path": ["items", 0, "amount"], "message": "must be at most 100"},
            {"path": [], "message": "an order needs an id"},
        ]))
        .unwrap();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].contains("items") && lines[0].contains("must be at most 100"),
            "{lines:?}"
        );
        assert!(problem_lines(&json!({"path": []})).is_err());
    }
}
