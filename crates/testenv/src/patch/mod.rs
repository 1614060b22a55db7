//! Patches: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

mod json_patch;
mod merge_patch;
mod strategic_merge_patch;

pub(crate) use json_patch::{JsonPatchError, json_patch};
pub(crate) use merge_patch::merge_patch;
pub(crate) use strategic_merge_patch::{SmpError, strategic_merge_patch};

/// A JSON syntax error worded as Go's `encoding/json` words it (kube-apiserver's messages).
pub(crate) fn go_json_error(body: &[u8], e: &serde_json::Error) -> String {
    // Go's scanner finds the same first error; what it accepts and serde does not (nesting
    // beyond serde's limit, invalid UTF-8) keeps serde's words.
    crate::wire::go_json::syntax_error(body).unwrap_or_else(|| e.to_string())
}
