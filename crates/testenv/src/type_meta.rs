//! Removing an object's `kind` and `apiVersion` (its TypeMeta) from its serialized JSON, for
//! the items of built-in lists, without parsing the whole object again.

use bytes::{Bytes, BytesMut};

/// `json` (one serialized JSON object) without its top-level `"kind"` and `"apiVersion"`
/// members. Anything that is not an object comes back unchanged.
pub(crate) fn strip(json: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(json.len());
    let mut depth = 0usize;
    let mut i = 0;
    let mut in_string = false;
    // Where the current top-level member starts (after `{` or `,`), and whether a member has
    // been written since the opening brace.
    let mut member_start: Option<usize> = None;
    let mut wrote_member = false;
    while i < json.len() {
        let c = json[i];
        if in_string {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                if depth == 1 && member_start.is_none() {
                    member_start = Some(i);
                }
                in_string = true;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    out.extend_from_slice(&json[..=i]);
                }
            }
            b'}' | b']' | b',' if depth == 1 => {
                if let Some(start) = member_start.take() {
                    let member = &json[start..i];
                    let dropped =
                        member.starts_with(b"\"kind\":") || member.starts_with(b"\"apiVersion\":");
                    if !dropped {
                        if wrote_member {
                            out.extend_from_slice(b",");
                        }
                        out.extend_from_slice(member);
                        wrote_member = true;
                    }
                }
                if c == b'}' {
                    out.extend_from_slice(b"}");
                    return out.freeze();
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Bytes::copy_from_slice(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_should_drop_only_the_top_level_type_meta() {
        let json = br#"{"apiVersion":"v1","involvedObject":{"kind":"Pod","name":"a,\"}"},"kind":"Event","metadata":{"name":"e"}}"#;
        assert_eq!(
            &strip(json)[..],
            br#"{"involvedObject":{"kind":"Pod","name":"a,\"}"},"metadata":{"name":"e"}}"#
        );
        assert_eq!(&strip(br#"{"kind":"X"}"#)[..], b"{}");
        assert_eq!(&strip(b"[1,2]")[..], b"[1,2]");
    }
}
