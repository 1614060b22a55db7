//! Patches: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

mod json_patch;
mod merge_patch;
mod strategic_merge_patch;

pub(crate) use json_patch::{JsonPatchError, json_patch};
pub(crate) use merge_patch::merge_patch;
pub(crate) use strategic_merge_patch::{SmpError, strategic_merge_patch};
