//! JSON patch (RFC 6902).

use serde_json::Value;

/// Why a JSON patch could not be applied.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JsonPatchError {
    /// The patch document is not a list of operations.
    Malformed(String),
    /// An operation failed against the object (missing path, failed `test`).
    Failed(String),
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn tokens(pointer: &str) -> Result<Vec<String>, JsonPatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    // As evanphx/json-patch (v4) reads a path: split at `/`, the first part (empty for a
    // pointer) ignored; a path with no `/` names nothing, so the operation fails.
    let Some((_, rest)) = pointer.split_once('/') else {
        return Err(JsonPatchError::Failed(format!(
            "doc is missing path: {pointer:?}"
        )));
    };
    Ok(rest.split('/').map(unescape).collect())
}

fn get_mut<'a>(root: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    let mut cur = root;
    for t in path {
        cur = match cur {
            Value::Object(m) => m.get_mut(t)?,
            Value::Array(a) => a.get_mut(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn remove(root: &mut Value, path: &[String]) -> Result<Value, JsonPatchError> {
    let missing = || JsonPatchError::Failed(format!("path /{} does not exist", path.join("/")));
    let (last, parent) = path.split_last().ok_or_else(missing)?;
    match get_mut(root, parent).ok_or_else(missing)? {
        Value::Object(m) => m.remove(last).ok_or_else(missing),
        Value::Array(a) => {
            let i = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < a.len())
                .ok_or_else(missing)?;
            Ok(a.remove(i))
        }
        _ => Err(missing()),
    }
}

fn add(root: &mut Value, path: &[String], value: Value) -> Result<(), JsonPatchError> {
    let missing = || JsonPatchError::Failed(format!("path /{} does not exist", path.join("/")));
    let Some((last, parent)) = path.split_last() else {
        *root = value;
        return Ok(());
    };
    match get_mut(root, parent).ok_or_else(missing)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                last.parse::<usize>()
                    .ok()
                    .filter(|i| *i <= a.len())
                    .ok_or_else(missing)?
            };
            a.insert(i, value);
            Ok(())
        }
        _ => Err(missing()),
    }
}

/// Applies a JSON patch (a list of operations) in place; on error `target` may be partly changed,
/// so callers apply it to a copy.
pub(crate) fn json_patch(target: &mut Value, patch: &Value) -> Result<(), JsonPatchError> {
    let Value::Array(ops) = patch else {
        let kind = match patch {
            Value::Object(_) => "object",
            Value::String(_) => "string",
            Value::Number(_) => "number",
            Value::Bool(_) => "bool",
            _ => "null",
        };
        return Err(JsonPatchError::Malformed(format!(
            "json: cannot unmarshal {kind} into Go value of type []handlers.jsonPatchOp"
        )));
    };
    for op in ops {
        let field = |name: &str| -> Result<&str, JsonPatchError> {
            op.get(name)
                .and_then(Value::as_str)
                .ok_or_else(|| JsonPatchError::Malformed(format!("operation {op} has no {name:?}")))
        };
        let value = || {
            op.get("value").cloned().ok_or_else(|| {
                JsonPatchError::Malformed(format!("operation {op} has no \"value\""))
            })
        };
        // An operation without a path works on the path "unknown", which names nothing.
        let path = tokens(op.get("path").and_then(Value::as_str).unwrap_or("unknown"))?;
        match field("op")? {
            "add" => add(target, &path, value()?)?,
            "remove" => {
                remove(target, &path)?;
            }
            "replace" => {
                let v = value()?;
                let missing =
                    || JsonPatchError::Failed(format!("path /{} does not exist", path.join("/")));
                match path.split_last() {
                    // evanphx/json-patch (v4) reads a missing key of an object as null, so
                    // `replace` sets a key the object lacks (an array index must exist).
                    Some((last, parent)) => match get_mut(target, parent).ok_or_else(missing)? {
                        Value::Object(m) => {
                            m.insert(last.clone(), v);
                        }
                        other => {
                            *get_mut(other, std::slice::from_ref(last)).ok_or_else(missing)? = v
                        }
                    },
                    None => *target = v,
                }
            }
            "move" => {
                let from = tokens(field("from")?)?;
                let v = remove(target, &from)?;
                add(target, &path, v)?;
            }
            "copy" => {
                let from = tokens(field("from")?)?;
                let v = get_mut(target, &from).map(|v| v.clone()).ok_or_else(|| {
                    JsonPatchError::Failed(format!("path /{} does not exist", from.join("/")))
                })?;
                add(target, &path, v)?;
            }
            "test" => {
                let expected = value()?;
                if get_mut(target, &path).map(|v| &*v) != Some(&expected) {
                    return Err(JsonPatchError::Failed(format!(
                        "testing value /{} failed",
                        path.join("/")
                    )));
                }
            }
            other => {
                return Err(JsonPatchError::Malformed(format!(
                    "unknown operation {other:?}"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_should_apply_every_operation() {
        let mut v = json!({"a": {"b": [1, 2]}, "x": 1});
        let patch = json!([
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "add", "path": "/a/b/0", "value": 0},
            {"op": "remove", "path": "/a/b/1"},
            {"op": "replace", "path": "/x", "value": 2},
            {"op": "copy", "from": "/x", "path": "/y"},
            {"op": "move", "from": "/y", "path": "/a~1b"},
            {"op": "test", "path": "/x", "value": 2}
        ]);
        json_patch(&mut v, &patch).unwrap();
        assert_eq!(v, json!({"a": {"b": [0, 2, 3]}, "x": 2, "a/b": 2}));
    }

    #[test]
    fn json_patch_should_fail_a_test_or_a_missing_path() {
        let mut v = json!({"x": 1});
        assert!(matches!(
            json_patch(&mut v, &json!([{"op": "test", "path": "/x", "value": 2}])),
            Err(JsonPatchError::Failed(_))
        ));
        assert!(matches!(
            json_patch(
                &mut v,
                &json!([{"op": "replace", "path": "/nope/x", "value": 2}])
            ),
            Err(JsonPatchError::Failed(_))
        ));
        assert!(matches!(
            json_patch(
                &mut json!({"a": [1]}),
                &json!([{"op": "replace", "path": "/a/1", "value": 2}])
            ),
            Err(JsonPatchError::Failed(_))
        ));
        // As evanphx/json-patch v4: a missing key of an existing object is replaced (set).
        json_patch(
            &mut v,
            &json!([{"op": "replace", "path": "/nope", "value": 2}]),
        )
        .unwrap();
        assert_eq!(v, json!({"x": 1, "nope": 2}));
        assert!(matches!(
            json_patch(&mut v, &json!({"op": "add"})),
            Err(JsonPatchError::Malformed(_))
        ));
    }
}
