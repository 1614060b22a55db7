//! Continue tokens as kube-apiserver writes them (`apiserver/pkg/storage/continue.go`): base64url
//! (unpadded) of `{"v":"meta.k8s.io/v1","rv":<list version>,"start":"<next key>"}`, opaque to
//! clients; a malformed token gets kube-apiserver's message.

use serde_json::{Value, json};

use super::go_json;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode_base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// `base64.RawURLEncoding.DecodeString`, with Go's error.
fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (i, &c) in bytes.iter().enumerate() {
        let Some(v) = ALPHABET.iter().position(|&a| a == c) else {
            return Err(format!("illegal base64 data at input byte {i}"));
        };
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // A lone trailing character cannot hold a byte.
    if bytes.len() % 4 == 1 {
        return Err(format!(
            "illegal base64 data at input byte {}",
            bytes.len() - 1
        ));
    }
    Ok(out)
}

/// The token of a list page at version `rv` that continues after `key`.
pub(crate) fn encode(rv: u64, key: &str) -> String {
    // The start key is the next possible key: the last one returned plus a NUL.
    let token = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{key}\u{0}")});
    encode_base64(token.to_string().as_bytes())
}

/// The version and the last key returned of a token, or kube-apiserver's message for a bad one.
pub(crate) fn decode(token: &str) -> Result<(u64, String), String> {
    let invalid = "continue key is not valid";
    let data = decode_base64(token).map_err(|e| format!("{invalid}: {e}"))?;
    if let Some(e) = go_json::syntax_error(&data) {
        return Err(format!("{invalid}: {e}"));
    }
    let value: Value = serde_json::from_slice(&data).map_err(|e| format!("{invalid}: {e}"))?;
    let field = |k: &str| value.get(k);
    match field("v").and_then(Value::as_str) {
        Some("meta.k8s.io/v1") => {}
        other => {
            return Err(format!(
                "{invalid}: server does not recognize this encoded version {}",
                other.unwrap_or_default()
            ));
        }
    }
    let rv = field("rv")
        .and_then(Value::as_u64)
        .filter(|rv| *rv > 0)
        .ok_or_else(|| {
            format!("{invalid}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
        })?;
    let start = field("start").and_then(Value::as_str).unwrap_or_default();
    // A start key that `path.Clean` would change (one climbing out of the prefix) is refused.
    if !start.is_empty() {
        let rooted = if start.starts_with('/') {
            start.to_owned()
        } else {
            format!("/{start}")
        };
        if clean_rooted(&rooted) != rooted {
            return Err(format!("{invalid}: {start}"));
        }
    }
    let Some(key) = start.strip_suffix('\u{0}').filter(|k| !k.is_empty()) else {
        return Err(format!("{invalid}: encoded start key empty"));
    };
    Ok((rv, key.to_owned()))
}

/// Go's `path.Clean` of a path starting with `/`.
fn clean_rooted(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_should_round_trip_and_bad_ones_be_reported_as_kube_apiserver_does() {
        let t = encode(42, "ns/name-1");
        assert!(t.bytes().all(|b| ALPHABET.contains(&b)), "{t}");
        assert_eq!(decode(&t), Ok((42, "ns/name-1".to_owned())));
        assert_eq!(
            decode("garbage"),
            Err("continue key is not valid: invalid character '\\u0081' looking for beginning of value".into())
        );
        assert_eq!(
            decode(&encode_base64(
                br#"{"v":"meta.k8s.io/v1","rv":5,"start":"../../secrets/x"}"#
            )),
            Err("continue key is not valid: ../../secrets/x".into())
        );
        assert_eq!(
            decode(&encode_base64(br#"{"v":"meta.k8s.io/v0","rv":5,"start":"a\u0000"}"#)),
            Err("continue key is not valid: server does not recognize this encoded version meta.k8s.io/v0".into())
        );
        assert_eq!(
            decode("a*"),
            Err("continue key is not valid: illegal base64 data at input byte 1".into())
        );
        assert_eq!(
            decode(&encode_base64(br#"{"v":"meta.k8s.io/v1","rv":0,"start":"a\u0000"}"#)),
            Err("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into())
        );
        for n in 0..8 {
            let data: Vec<u8> = (0..n).map(|i: u32| (i * 37 + 200) as u8).collect();
            assert_eq!(decode_base64(&encode_base64(&data)), Ok(data));
        }
    }
}
