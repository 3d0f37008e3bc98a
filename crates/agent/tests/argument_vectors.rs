//! The shared tool-argument vectors (`testdata/tools/arguments.json`; the
//! Python and Node packages run the same file): each schema and arguments
//! give exactly these problems, and the arguments pass when there are none.

use parlance_agent::ArgValidator;
use serde_json::Value;

#[test]
fn every_vector_gives_its_problems() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tools/arguments.json"
    );
    let text = std::fs::read_to_string(path).expect("the vectors");
    let vectors: Vec<Value> = serde_json::from_str(&text).expect("JSON");
    assert!(vectors.len() >= 10, "the vectors file lost entries");
    for v in &vectors {
        let name = v["name"].as_str().expect("a name");
        let validator = ArgValidator::new("t", &v["schema"]).expect(name);
        let want: Vec<String> = v["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|p| p.as_str().expect("a line").to_string())
            .collect();
        assert_eq!(validator.problems(&v["arguments"]), want, "{name}");
        assert_eq!(
            validator.is_valid(&v["arguments"]),
            want.is_empty(),
            "{name}"
        );
    }
}
