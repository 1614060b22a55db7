//! Patches: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

mod json_patch;
mod merge_patch;
mod strategic_merge_patch;

pub(crate) use json_patch::{JsonPatchError, json_patch};
pub(crate) use merge_patch::merge_patch;
pub(crate) use strategic_merge_patch::{SmpError, strategic_merge_patch};

/// A JSON syntax error worded as Go's `encoding/json` words it (kube-apiserver's messages).
pub(crate) fn go_json_error(body: &[u8], e: &serde_json::Error) -> String {
    if e.is_eof() {
        return "unexpected end of JSON input".into();
    }
    let at = body
        .split(|b| *b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        + e.column().saturating_sub(1);
    let c = body.get(at).map_or(' ', |b| char::from(*b));
    let text = e.to_string();
    if text.starts_with("key must be a string") {
        format!("invalid character '{c}' looking for beginning of object key string")
    } else if text.starts_with("expected value") {
        format!("invalid character '{c}' looking for beginning of value")
    } else {
        text
    }
}
