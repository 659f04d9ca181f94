//! Which framed bodies are JSON-RPC messages the protocol layer can take, and the error reply
//! for the others.
//!
//! tower-lsp-server stops reading its input at the first body it cannot decode, so nothing it
//! would refuse may reach it: a body passes only if it is a JSON object with `"jsonrpc": "2.0"`
//! that is a request, a notification or a response, and it also decodes as tower's own
//! [`Request`] or [`Response`] (so both sides agree on what is well formed).

use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::{Request, Response};

/// JSON-RPC's codes for bodies that are not JSON, and for JSON that is not a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    ParseError,
    InvalidRequest,
}

impl Code {
    pub fn number(self) -> i64 {
        match self {
            Code::ParseError => -32700,
            Code::InvalidRequest => -32600,
        }
    }
}

/// A refused message: the error code, the id to answer (the request's own when it can be read,
/// else null), and why, in a few words.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    pub code: Code,
    pub id: Value,
    pub why: String,
}

impl Rejection {
    fn new(code: Code, why: impl Into<String>) -> Rejection {
        Rejection { code, id: Value::Null, why: why.into() }
    }

    /// The JSON-RPC error response.
    pub fn reply(&self) -> Value {
        json!({ "jsonrpc": "2.0", "error": { "code": self.code.number(), "message": self.why }, "id": self.id })
    }
}

/// What a valid message is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accepted {
    Request,
    Notification { method: String },
    Response,
}

/// Accepts a body the protocol layer can decode, or says why not.
pub fn validate(body: &[u8]) -> Result<Accepted, Rejection> {
    let value: Value = serde_json::from_slice(body).map_err(|e| Rejection::new(Code::ParseError, format!("parse error: {e}")))?;
    let obj = match &value {
        Value::Object(o) => o,
        Value::Array(a) if a.is_empty() => return Err(Rejection::new(Code::InvalidRequest, "invalid request: an empty batch")),
        Value::Array(_) => return Err(Rejection::new(Code::InvalidRequest, "invalid request: batches are not part of LSP")),
        other => return Err(Rejection::new(Code::InvalidRequest, format!("invalid request: expected an object, found {}", kind(other)))),
    };
    // Answer with the request's id when there is a usable one, so the client can match it.
    let id = match (obj.get("method"), obj.get("id")) {
        (Some(_), Some(id @ (Value::String(_) | Value::Number(_)))) if id.is_string() || id.is_i64() => id.clone(),
        _ => Value::Null,
    };
    let reject = |why: String| Err(Rejection { code: Code::InvalidRequest, id: id.clone(), why: format!("invalid request: {why}") });
    match obj.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => return reject(format!("expected \"jsonrpc\": \"2.0\", found {other}")),
        None => return reject("missing \"jsonrpc\": \"2.0\"".into()),
    }
    if let Some(v) = obj.get("id").filter(|v| !(v.is_string() || v.is_i64() || v.is_null())) {
        return reject(format!("expected an integer or string id, found {}", kind(v)));
    }
    match obj.get("method") {
        Some(Value::String(method)) => match serde_json::from_value::<Request>(value.clone()) {
            Ok(_) if obj.contains_key("id") => Ok(Accepted::Request),
            Ok(_) => Ok(Accepted::Notification { method: method.clone() }),
            Err(e) => reject(e.to_string()),
        },
        Some(other) => reject(format!("expected a string method, found {}", kind(other))),
        None if obj.contains_key("result") == obj.contains_key("error") => reject("neither a request, a notification nor a response".into()),
        None => match serde_json::from_value::<Response>(value.clone()) {
            Ok(_) => Ok(Accepted::Response),
            Err(e) => reject(format!("a malformed response: {e}")),
        },
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(body: &str, expect: Expect) {
        let out = match validate(body.as_bytes()) {
            Ok(Accepted::Notification { method }) => format!("notification {method}"),
            Ok(a) => format!("{a:?}"),
            Err(r) => r.reply().to_string(),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn messages_pass() {
        check(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#, expect!["Request"]);
        check(r#"{"jsonrpc":"2.0","id":"a","method":"shutdown"}"#, expect!["Request"]);
        check(r#"{"jsonrpc":"2.0","method":"exit"}"#, expect!["notification exit"]);
        check(r#"{"jsonrpc":"2.0","id":4,"result":null}"#, expect!["Response"]);
        check(r#"{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}"#, expect!["Response"]);
    }

    #[test]
    fn bodies_that_are_not_json_are_parse_errors() {
        check("nonsense{", expect![[r#"{"error":{"code":-32700,"message":"parse error: expected ident at line 1 column 2"},"id":null,"jsonrpc":"2.0"}"#]]);
        check("", expect![[r#"{"error":{"code":-32700,"message":"parse error: EOF while parsing a value at line 1 column 0"},"id":null,"jsonrpc":"2.0"}"#]]);
        let invalid_utf8 = validate(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}").unwrap_err();
        assert_eq!((invalid_utf8.code, invalid_utf8.id), (Code::ParseError, Value::Null), "{}", invalid_utf8.why);
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        check("[]", expect![[r#"{"error":{"code":-32600,"message":"invalid request: an empty batch"},"id":null,"jsonrpc":"2.0"}"#]]);
        check("[{}]", expect![[r#"{"error":{"code":-32600,"message":"invalid request: batches are not part of LSP"},"id":null,"jsonrpc":"2.0"}"#]]);
        check("5", expect![[r#"{"error":{"code":-32600,"message":"invalid request: expected an object, found an integer"},"id":null,"jsonrpc":"2.0"}"#]]);
        check(
            r#"{"id":3,"method":"shutdown"}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: missing \"jsonrpc\": \"2.0\""},"id":3,"jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"1.0","id":"x","method":"shutdown"}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: expected \"jsonrpc\": \"2.0\", found \"1.0\""},"id":"x","jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: expected an integer or string id, found a number"},"id":null,"jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"2.0","id":2,"method":7}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: expected a string method, found an integer"},"id":2,"jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"2.0","id":2}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: neither a request, a notification nor a response"},"id":null,"jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"2.0","id":2,"result":1,"error":{"code":1,"message":"x"}}"#,
            expect![[r#"{"error":{"code":-32600,"message":"invalid request: neither a request, a notification nor a response"},"id":null,"jsonrpc":"2.0"}"#]],
        );
        check(
            r#"{"jsonrpc":"2.0","id":2,"error":"bad"}"#,
            expect![[
                r#"{"error":{"code":-32600,"message":"invalid request: a malformed response: data did not match any variant of untagged enum Kind"},"id":null,"jsonrpc":"2.0"}"#
            ]],
        );
    }
}
