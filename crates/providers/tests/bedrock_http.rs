//! Bedrock over real HTTP on 127.0.0.1: Converse and ConverseStream
//! (binary AWS event-stream frames written with `aws-smithy-eventstream`'s
//! encoder), a stream failing mid-way (an exception frame; a connection
//! cut inside a frame), throttling retried, an auth failure not retried;
//! SigV4 (checked against the AWS signing test suite that ships with the
//! `aws-sigv4` crate) and the credentials' sources (environment, shared
//! profile files, a Bedrock API key).

mod common;

use std::time::{Duration, SystemTime};

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message as EsMessage};
use common::http::{collect, env, quick_retries};
use common::{fixture, json_file, read, testdata};
use parlance_format::{Block, FinishReason, Message};
use parlance_model::{Model, ModelError, ModelRequest, StreamEvent};
use parlance_providers::bedrock::auth::{AwsCredentials, AwsSigner, sign_request};
use parlance_providers::transport::HttpRequest;
use parlance_providers::transport::aws_eventstream::parse_event_stream;
use parlance_providers::{BuildError, HttpModel, ModelBuilder, Provider, Secret};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::{Value, json};

const MODEL: &str = "anthropic.claude-sonnet-4-5-20250929-v1:0";

const KEYS: &[(&str, &str)] = &[
    ("AWS_ACCESS_KEY_ID", "AKIDTEST"),
    ("AWS_SECRET_ACCESS_KEY", "secret/TEST+key"),
    ("AWS_SESSION_TOKEN", "SESSION-TOKEN-123"),
    ("AWS_REGION", "eu-west-3"),
    ("HOME", "/nonexistent-home"),
];

fn bedrock(server: &ReplayServer) -> HttpModel {
    Provider::BEDROCK
        .model(MODEL)
        .base_url(server.url.clone())
        .http_config(quick_retries())
        .build_with_env(env(KEYS))
        .unwrap()
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::user("What's the weather like in San Francisco?"),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Get the current weather for a location",
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        )]
        .into(),
        ..Default::default()
    }
}

/// Checks the request the server got is signed for `key` in `region`, and
/// that the signature is the one SigV4 gives for its URL, body and date.
fn check_signed(r: &parlance_testkit::replay::Received, url: &str, key: &str, region: &str) {
    let auth = r.header("authorization").expect("signed");
    let date = r.header("x-amz-date").expect("x-amz-date");
    assert!(
        auth.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential={key}/{}/{region}/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature="
        , &date[..8])),
        "{auth}"
    );
    assert_eq!(r.header("x-amz-security-token"), Some("SESSION-TOKEN-123"));
    // Signing the same request again at the same time gives the same header.
    let time = chrono_free_parse(date);
    let mut again = HttpRequest::new(format!("{url}{}", r.path), r.raw_body.clone());
    let signer = AwsSigner {
        credentials: AwsCredentials {
            access_key_id: key.into(),
            secret_access_key: Secret::new("secret/TEST+key"),
            session_token: Some(Secret::new("SESSION-TOKEN-123")),
        },
        region: region.into(),
        service: "bedrock",
    };
    sign_request(&mut again, &signer, time).unwrap();
    assert_eq!(again.headers["authorization"].to_str().unwrap(), auth);
}

/// `20150830T123600Z` → a time.
fn chrono_free_parse(s: &str) -> SystemTime {
    let n = |a: usize, b: usize| s[a..b].parse::<i64>().unwrap();
    let (y, m, d, hh, mm, ss) = (n(0, 4), n(4, 6), n(6, 8), n(9, 11), n(11, 13), n(13, 15));
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    let secs = days * 86400 + hh * 3600 + mm * 60 + ss;
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs as u64)
}

#[tokio::test]
async fn converse_is_signed_and_decoded() {
    let body = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &body)]).await;
    let model = bedrock(&server);
    let m = model.generate(&request()).await.unwrap();
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    assert!(
        matches!(&m.content[0], Block::ToolCall { tool_call } if tool_call.arguments["location"] == "San Francisco, CA")
    );
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].path,
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    );
    assert_eq!(got[0].body["system"], json!([{"text": "Be brief."}]));
    check_signed(&got[0], &server.url, "AKIDTEST", "eu-west-3");
}

#[tokio::test]
async fn a_bedrock_api_key_is_a_bearer_token_and_nothing_is_signed() {
    let body = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &body)]).await;
    let mut vars = KEYS.to_vec();
    vars.push(("AWS_BEARER_TOKEN_BEDROCK", "ABSKbedrockapikey"));
    let model = Provider::BEDROCK
        .model(MODEL)
        .base_url(server.url.clone())
        .http_config(quick_retries())
        .build_with_env(env(&vars))
        .unwrap();
    model.generate(&request()).await.unwrap();
    let got = &server.received()[0];
    assert_eq!(
        got.header("authorization"),
        Some("Bearer ABSKbedrockapikey")
    );
    assert_eq!(got.header("x-amz-date"), None);
    assert!(
        !format!("{model:?}").contains("ABSKbedrockapikey"),
        "the key never shows"
    );
}

/// One event-stream message.
fn frame(kind: &str, name: &str, payload: &Value) -> Vec<u8> {
    let type_header = if kind == "exception" {
        ":exception-type"
    } else {
        ":event-type"
    };
    let msg = EsMessage::new(payload.to_string().into_bytes())
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String(kind.to_string().into()),
        ))
        .add_header(Header::new(
            type_header,
            HeaderValue::String(name.to_string().into()),
        ))
        .add_header(Header::new(
            ":content-type",
            HeaderValue::String("application/json".into()),
        ));
    let mut out = Vec::new();
    write_message_to(&msg, &mut out).unwrap();
    out
}

/// The recorded stream (SDK-decoded events) as event-stream bytes.
fn recorded_stream() -> Vec<u8> {
    let events = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response-streaming.json",
    ));
    let mut bytes = Vec::new();
    for e in events.as_array().unwrap() {
        let (name, payload) = e.as_object().unwrap().iter().next().unwrap();
        bytes.extend(frame("event", name, payload));
    }
    bytes
}

/// `bytes` in chunks of `n` (frames split across chunks).
fn chunks(bytes: &[u8], n: usize) -> Vec<Vec<u8>> {
    bytes.chunks(n).map(<[u8]>::to_vec).collect()
}

#[tokio::test]
async fn converse_stream_frames_are_decoded_across_chunk_boundaries() {
    let bytes = recorded_stream();
    // Parsed whole, as the transport cuts it.
    let pairs = parse_event_stream(&bytes).unwrap();
    assert_eq!(pairs[0].0, "messageStart");
    let server = ReplayServer::start(vec![Reply::Binary {
        chunks: chunks(&bytes, 37),
        cut: false,
    }])
    .await;
    let model = bedrock(&server);
    let (events, m) = collect(&model, &request()).await;
    let m = m.unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolArgumentsDelta { .. }))
    );
    let plain = parlance_providers::bedrock::decode_response(&json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    )))
    .unwrap();
    assert_eq!(
        m.content,
        plain
            .content
            .iter()
            .map(|b| match b {
                // Ids differ between the two recordings.
                Block::ToolCall { tool_call } => {
                    let mut c = tool_call.clone();
                    c.id = "tooluse_BT9rxvwyCJ9lMdNjdnKJll".into();
                    Block::ToolCall { tool_call: c }
                }
                other => other.clone(),
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(m.usage.unwrap().input_tokens, 677);
    let got = server.received();
    assert_eq!(
        got[0].path,
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    check_signed(&got[0], &server.url, "AKIDTEST", "eu-west-3");
}

#[tokio::test]
async fn an_exception_frame_mid_stream_ends_it_with_a_typed_error_not_retried() {
    let mut bytes = frame("event", "messageStart", &json!({"role": "assistant"}));
    bytes.extend(frame(
        "event",
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"text": "Hello"}}),
    ));
    bytes.extend(frame("exception", "modelStreamErrorException", &json!({"message": "Model stream failed", "originalStatusCode": 500, "originalMessage": "boom"})));
    let server = ReplayServer::start(vec![Reply::Binary {
        chunks: vec![bytes],
        cut: false,
    }])
    .await;
    let model = bedrock(&server);
    let (events, m) = collect(&model, &request()).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta { text, .. } if text == "Hello"))
    );
    let e = m.unwrap_err();
    assert!(
        matches!(e, ModelError::Server { .. }) && e.to_string().contains("boom"),
        "{e:?}"
    );
    assert_eq!(
        server.received().len(),
        1,
        "output reached the caller: no retry"
    );
}

#[tokio::test]
async fn a_connection_cut_inside_a_frame_is_a_network_error() {
    let mut bytes = frame("event", "messageStart", &json!({"role": "assistant"}));
    bytes.extend(frame(
        "event",
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"text": "Hello"}}),
    ));
    let half = frame(
        "event",
        "contentBlockDelta",
        &json!({"contentBlockIndex": 0, "delta": {"text": " world"}}),
    );
    bytes.extend(&half[..half.len() / 2]);
    let server = ReplayServer::start(vec![Reply::Binary {
        chunks: vec![bytes],
        cut: true,
    }])
    .await;
    let (events, m) = collect(&bedrock(&server), &request()).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta { .. }))
    );
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
}

#[tokio::test]
async fn a_corrupt_frame_is_a_malformed_response() {
    let mut bytes = frame("event", "messageStart", &json!({"role": "assistant"}));
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff; // the message CRC no longer matches
    let server = ReplayServer::start(vec![Reply::Binary {
        chunks: vec![bytes],
        cut: false,
    }])
    .await;
    let (_, m) = collect(&bedrock(&server), &request()).await;
    let e = m.unwrap_err();
    assert!(
        matches!(e, ModelError::MalformedResponse { .. }) && e.to_string().contains("event-stream"),
        "{e:?}"
    );
    // A frame claiming to be huge is refused before it is buffered.
    let huge = [0xffu8, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let e = parse_event_stream(&huge).unwrap_err();
    assert!(e.to_string().contains("the limit is"), "{e}");
}

#[tokio::test]
async fn throttling_is_retried_and_signed_each_time() {
    let ok = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    ));
    let server = ReplayServer::start(vec![
        Reply::json(
            429,
            &json!({"message": "Too many requests, please wait before trying again."}),
        )
        .with_header(
            "x-amzn-ErrorType",
            "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        ),
        Reply::json(200, &ok),
    ])
    .await;
    let m = bedrock(&server).generate(&request()).await.unwrap();
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    let got = server.received();
    assert_eq!(got.len(), 2);
    for r in &got {
        check_signed(r, &server.url, "AKIDTEST", "eu-west-3");
    }
    // A stream is retried the same way while nothing has reached the caller.
    let server = ReplayServer::start(vec![
        Reply::json(503, &json!({"message": "Service unavailable"})),
        Reply::Binary {
            chunks: chunks(&recorded_stream(), 64),
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&bedrock(&server), &request()).await;
    assert!(m.is_ok(), "{m:?}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn an_auth_failure_is_typed_and_not_retried() {
    let server = ReplayServer::start(vec![Reply::json(
        403,
        &json!({"message": "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}),
    )])
    .await;
    let e = bedrock(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::Authentication { .. }), "{e:?}");
    assert!(!e.to_string().contains("secret/TEST+key"));
    assert_eq!(server.received().len(), 1);
    let server = ReplayServer::start(vec![Reply::json(
        403,
        &json!({"message": "You don't have access to the model with the specified model ID."}),
    )])
    .await;
    let e = bedrock(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::Permission { .. }), "{e:?}");
}

/// The AWS signing test suite (`aws-signing-test-suite/v4/<case>` of the
/// `aws-sigv4` crate, copied to `testdata/specs/bedrock/sigv4/`): the
/// signed request's `Authorization` header, from its context (keys,
/// region, service, time).
#[test]
fn sigv4_matches_the_aws_signing_test_suite() {
    for case in ["post-vanilla", "post-sts-header-before"] {
        let dir = testdata().join("specs/bedrock/sigv4").join(case);
        let ctx: Value = json_file(&dir.join("context.json"));
        let signed = read(&dir.join("header-signed-request.txt"));
        let want = |h: &str| {
            signed
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{h}:")))
                .map(str::to_string)
        };
        let c = &ctx["credentials"];
        let signer = AwsSigner {
            credentials: AwsCredentials {
                access_key_id: c["access_key_id"].as_str().unwrap().into(),
                secret_access_key: Secret::new(c["secret_access_key"].as_str().unwrap()),
                session_token: c["token"].as_str().map(Secret::new),
            },
            region: ctx["region"].as_str().unwrap().into(),
            service: "service",
        };
        let mut http = HttpRequest::new("https://example.amazonaws.com/".into(), Vec::new());
        sign_request(&mut http, &signer, chrono_free_parse("20150830T123600Z")).unwrap();
        let got = |h: &str| http.headers.get(h).map(|v| v.to_str().unwrap().to_string());
        assert_eq!(got("authorization"), want("Authorization"), "{case}");
        assert_eq!(got("x-amz-date"), want("X-Amz-Date"), "{case}");
        assert_eq!(
            got("x-amz-security-token"),
            want("X-Amz-Security-Token"),
            "{case}"
        );
        assert!(http.headers["authorization"].is_sensitive());
    }
}

/// A folder for profile files, inside the build's own directory.
fn profile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bedrock-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn credentials_and_region_come_from_the_shared_profile_files() {
    let dir = profile_dir("profiles");
    std::fs::write(dir.join("credentials"), "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = x\n\n[work]\naws_access_key_id = AKIDTEST\n# a comment\naws_secret_access_key = secret/TEST+key\naws_session_token = SESSION-TOKEN-123\n").unwrap();
    std::fs::write(dir.join("config"), "[default]\nregion = us-east-1\n[profile work]\nregion = ap-south-1\n[profile sso]\nsso_session = corp\nregion = us-east-2\n").unwrap();
    let files = [
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            dir.join("credentials").to_string_lossy().to_string(),
        ),
        (
            "AWS_CONFIG_FILE",
            dir.join("config").to_string_lossy().to_string(),
        ),
    ];
    let with_files = |extra: &[(&str, &str)]| {
        let mut v: Vec<(&str, &str)> = files.iter().map(|(k, v)| (*k, v.as_str())).collect();
        v.extend_from_slice(extra);
        env(&v)
    };
    let ok = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &ok)]).await;
    let model = Provider::BEDROCK
        .model(MODEL)
        .base_url(server.url.clone())
        .build_with_env(with_files(&[("AWS_PROFILE", "work")]))
        .unwrap();
    model.generate(&request()).await.unwrap();
    check_signed(&server.received()[0], &server.url, "AKIDTEST", "ap-south-1");

    // The public endpoint is the region's.
    let model = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(with_files(&[]))
        .unwrap();
    assert_eq!(
        model.url(true),
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let model = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(with_files(&[("AWS_REGION", "eu-central-1")]))
        .unwrap();
    assert!(
        model
            .url(false)
            .starts_with("https://bedrock-runtime.eu-central-1.amazonaws.com/")
    );

    // A profile whose keys come another way is named, not skipped.
    let e = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(with_files(&[("AWS_PROFILE", "sso")]))
        .unwrap_err();
    assert!(
        matches!(&e, BuildError::Aws { message } if message.contains("sso_session") && message.contains("\"sso\"")),
        "{e}"
    );
}

#[test]
fn missing_credentials_or_region_are_named_before_any_request() {
    let e = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(env(&[
            ("AWS_REGION", "us-east-1"),
            ("HOME", "/nonexistent-home"),
        ]))
        .unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, BuildError::MissingKey { .. })
            && text.contains("AWS_BEARER_TOKEN_BEDROCK")
            && text.contains("AWS_ACCESS_KEY_ID"),
        "{text}"
    );
    let e = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(env(&[
            ("AWS_BEARER_TOKEN_BEDROCK", "k"),
            ("HOME", "/nonexistent-home"),
        ]))
        .unwrap_err();
    assert!(
        matches!(&e, BuildError::Aws { message } if message.contains("AWS_REGION")),
        "{e}"
    );
    let e = ModelBuilder::from_spec(&format!("bedrock:{MODEL}"))
        .unwrap()
        .build_with_env(env(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_REGION", "us-east-1"),
            ("HOME", "/nonexistent-home"),
        ]))
        .unwrap_err();
    assert!(
        matches!(&e, BuildError::Aws { message } if message.contains("without its secret")),
        "{e}"
    );
}

/// A profile whose `credential_process` prints keys that expire at `exp`
/// (an RFC 3339 time), counting its runs in `dir/count`.
fn process_profile(dir: &std::path::Path, exp: &str) -> Vec<(String, String)> {
    let script = dir.join("creds.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nn=$(cat '{d}/count' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '{d}/count'\nprintf '{{\"Version\": 1, \"AccessKeyId\": \"AKIDPROC%s\", \"SecretAccessKey\": \"secret/TEST+key\", \"SessionToken\": \"SESSION-TOKEN-123\", \"Expiration\": \"%s\"}}' \"$n\" \"$1\"\n",
            d = dir.display()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("config"),
        format!(
            "[profile proc]\nregion = us-west-2\ncredential_process = sh {} {exp}\n",
            script.display()
        ),
    )
    .unwrap();
    vec![
        ("AWS_PROFILE".into(), "proc".into()),
        (
            "AWS_CONFIG_FILE".into(),
            dir.join("config").to_string_lossy().to_string(),
        ),
        (
            "AWS_SHARED_CREDENTIALS_FILE".into(),
            dir.join("none").to_string_lossy().to_string(),
        ),
    ]
}

/// A Bedrock model at `url` with the profile of [`process_profile`]
/// (quick retries).
fn process_model(url: &str, vars: &[(String, String)]) -> HttpModel {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Provider::BEDROCK
        .model(MODEL)
        .base_url(url.to_string())
        .http_config(quick_retries())
        .build_with_env(env(&vars))
        .unwrap()
}

fn rfc3339(t: SystemTime) -> String {
    aws_smithy_types::DateTime::from(t)
        .fmt(aws_smithy_types::date_time::Format::DateTime)
        .unwrap()
}

/// Issue 37, item 10: every attempt is signed when it is sent (a retry
/// after a long first-byte timeout must not carry an expired signature),
/// with keys from a `credential_process` run again when they are about
/// to expire, and kept while they are good.
#[tokio::test]
async fn each_attempt_is_signed_with_fresh_keys_from_credential_process() {
    let ok = json_file(&fixture(
        "bedrock-converse",
        "lingua__toolCallRequest__bedrock__response.json",
    ));
    let failing = json!({"message": "internal failure"});

    // Keys expiring within the refresh margin: fetched for each attempt.
    let dir = profile_dir("process-soon");
    let vars = process_profile(&dir, &rfc3339(SystemTime::now() + Duration::from_secs(60)));
    let server = ReplayServer::start(vec![Reply::json(500, &failing), Reply::json(200, &ok)]).await;
    let model = process_model(&server.url, &vars);
    model.generate(&request()).await.unwrap();
    let got = server.received();
    assert_eq!(got.len(), 2, "retried once");
    check_signed(&got[0], &server.url, "AKIDPROC1", "us-west-2");
    check_signed(&got[1], &server.url, "AKIDPROC2", "us-west-2");
    assert_eq!(
        std::fs::read_to_string(dir.join("count")).unwrap().trim(),
        "2"
    );

    // Keys good for an hour: the process runs once for several requests.
    let dir = profile_dir("process-later");
    let vars = process_profile(
        &dir,
        &rfc3339(SystemTime::now() + Duration::from_secs(3600)),
    );
    let server = ReplayServer::start(vec![Reply::json(200, &ok), Reply::json(200, &ok)]).await;
    let model = process_model(&server.url, &vars);
    model.generate(&request()).await.unwrap();
    model.generate(&request()).await.unwrap();
    for r in server.received() {
        check_signed(&r, &server.url, "AKIDPROC1", "us-west-2");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("count")).unwrap().trim(),
        "1"
    );

    // A process that fails is an authentication error naming the profile.
    std::fs::write(
        dir.join("creds.sh"),
        "echo 'token expired, run aws sso login' >&2; exit 3\n",
    )
    .unwrap();
    std::fs::remove_file(dir.join("count")).unwrap();
    let model = process_model(&server.url, &vars);
    let e = model.generate(&request()).await.unwrap_err();
    assert!(
        matches!(&e, ModelError::Authentication { message } if message.contains("credential_process of profile \"proc\"") && message.contains("aws sso login")),
        "{e:?}"
    );
}

#[test]
fn credential_process_output_is_checked_field_by_field() {
    use parlance_providers::bedrock::auth::parse_process_output;
    let (c, exp) = parse_process_output(
        br#"{"Version": 1, "AccessKeyId": "AKID", "SecretAccessKey": "s", "Expiration": "2030-01-02T03:04:05Z"}"#,
    )
    .unwrap();
    assert_eq!(c.access_key_id, "AKID");
    assert!(c.session_token.is_none());
    assert_eq!(rfc3339(exp.unwrap()), "2030-01-02T03:04:05Z");
    for (out, says) in [
        (&b"not json"[..], "not JSON"),
        (
            br#"{"Version": 2, "AccessKeyId": "a", "SecretAccessKey": "s"}"#,
            "Version: expected 1",
        ),
        (
            br#"{"Version": 1, "SecretAccessKey": "s"}"#,
            "AccessKeyId: missing",
        ),
        (
            br#"{"Version": 1, "AccessKeyId": "a"}"#,
            "SecretAccessKey: missing",
        ),
        (
            br#"{"Version": 1, "AccessKeyId": "a", "SecretAccessKey": "s", "Expiration": "soon"}"#,
            "Expiration: \"soon\"",
        ),
    ] {
        let e = parse_process_output(out).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}
