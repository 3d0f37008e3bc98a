fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or("message.schema.json".into());
    println!(
        "{}",
        serde_json::to_string_pretty(&parlance_format::schema::by_name(&name).unwrap()).unwrap()
    );
}
