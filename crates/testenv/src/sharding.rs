//! `shardSelector` of list, watch and deletecollection requests (KEP-5866, alpha in
//! Kubernetes v1.36 behind the `ShardedListAndWatch` feature gate).
//!
//! A selector is a CEL expression made only of `shardRange(FIELD, 'START', 'END')` calls joined
//! by `||`. `FIELD` is `object.metadata.uid` or `object.metadata.namespace` (one field for the
//! whole selector); `START` and `END` are `0x` followed by 16 lowercase hex digits, or
//! `0x10000000000000000` (2^64, as an exclusive end). An object is selected when the 64-bit
//! FNV-1a hash of its field's string (`""` for the namespace of a cluster-scoped object) lies in
//! `[START, END)` of any range. Both fields are immutable, so an object never enters or leaves a
//! shard: watches filter their events and never turn a change into `ADDED` or `DELETED`.
//!
//! The expression is parsed with the `cel` crate (a CEL parser generated from the same ANTLR
//! grammar as cel-go's, so its syntax errors read as kube-apiserver's) and never evaluated: as
//! kube-apiserver does, the syntax tree is walked to collect the ranges, and anything else is
//! refused with kube-apiserver's message.

use cel::common::ast::{CallExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value;

/// Why a `shardSelector` was refused; kube-apiserver answers `500` with
/// `invalid shard selector: <this>` and no reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard selector: {0}")]
pub(crate) struct InvalidShardSelector(String);

/// The field a selector hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Uid,
    Namespace,
}

impl Field {
    fn path(self) -> &'static str {
        match self {
            Field::Uid => "object.metadata.uid",
            Field::Namespace => "object.metadata.namespace",
        }
    }
}

/// One `shardRange(field, start, end)`: the hashes in `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Range {
    field: Field,
    /// As written (validated, so already canonical).
    start: String,
    end: String,
    start_value: u128,
    end_value: u128,
}

/// A parsed, valid shard selector (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShardSelector {
    ranges: Vec<Range>,
}

/// 64-bit FNV-1a of `s`.
pub(crate) fn fnv1a_64(s: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    s.bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

impl ShardSelector {
    /// Parses a `shardSelector` query value. `Ok(None)`: the parameter is empty (no sharding).
    pub(crate) fn parse(text: &str) -> Result<Option<Self>, InvalidShardSelector> {
        if text.is_empty() {
            return Ok(None);
        }
        Self::parse_expression(text).map(Some)
    }

    fn parse_expression(text: &str) -> Result<Self, InvalidShardSelector> {
        let fail = |m: String| InvalidShardSelector(m);
        let text = text.trim();
        if text.is_empty() {
            return Err(fail(
                "empty shard selector is not allowed; omit the parameter for unfiltered lists"
                    .into(),
            ));
        }
        let expr = cel::parser::Parser::new().parse(text).map_err(|errors| {
            let first = errors
                .errors
                .first()
                .map(|e| e.msg.clone())
                .unwrap_or_default();
            fail(format!("CEL parse error: {first}"))
        })?;
        let mut ranges = Vec::new();
        walk(&expr, &mut ranges).map_err(fail)?;
        if let Some(first) = ranges.first()
            && let Some(other) = ranges.iter().find(|r| r.field != first.field)
        {
            return Err(fail(format!(
                "all shard ranges must use the same field, got {:?} and {:?}",
                first.field.path(),
                other.field.path()
            )));
        }
        Ok(Self { ranges })
    }

    /// Whether the object (JSON) lies in one of the ranges.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let meta = object.get("metadata");
        self.ranges.iter().any(|r| {
            let key = match r.field {
                Field::Uid => "uid",
                Field::Namespace => "namespace",
            };
            let value = meta
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let hash = u128::from(fnv1a_64(value));
            r.start_value <= hash && hash < r.end_value
        })
    }

    /// The canonical form that a list's `metadata.shardInfo.selector` echoes.
    pub(crate) fn canonical(&self) -> String {
        self.ranges
            .iter()
            .map(|r| format!("shardRange({}, '{}', '{}')", r.field.path(), r.start, r.end))
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

/// cel-go's `ast.ExprKind` numbers, which kube-apiserver prints in some messages.
fn kind_number(e: &Expr) -> u8 {
    match e {
        Expr::Unspecified => 0,
        Expr::Call(_) => 1,
        Expr::Comprehension(_) => 2,
        Expr::Ident(_) => 3,
        Expr::List(_) => 4,
        Expr::Literal(_) => 5,
        Expr::Map(_) => 6,
        Expr::Select(_) => 7,
        Expr::Struct(_) => 8,
    }
}

/// Collects the ranges of a `shardRange()` call or a `||` of them.
fn walk(e: &IdedExpr, out: &mut Vec<Range>) -> Result<(), String> {
    let Expr::Call(call) = &e.expr else {
        return Err(format!(
            "unexpected expression kind {}; expected shardRange() call or || operator",
            kind_number(&e.expr)
        ));
    };
    match call.func_name.as_str() {
        "_||_" => {
            if call.args.len() != 2 {
                return Err("|| operator requires exactly 2 arguments".into());
            }
            for arg in &call.args {
                walk(arg, out)?;
            }
            Ok(())
        }
        "shardRange" => {
            out.push(shard_range(call)?);
            Ok(())
        }
        other => Err(format!(
            "unsupported function {other:?}; only shardRange() and || are allowed"
        )),
    }
}

fn shard_range(call: &CallExpr) -> Result<Range, String> {
    let [field, start, end] = call.args.as_slice() else {
        return Err(format!(
            "shardRange() requires exactly 3 arguments, got {}",
            call.args.len()
        ));
    };
    let path = field_path(field)
        .map_err(|kind| format!("shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind {kind}"))?;
    let field = match path.as_str() {
        "object.metadata.uid" => Field::Uid,
        "object.metadata.namespace" => Field::Namespace,
        _ => {
            return Err(format!(
                "unsupported field path {path:?}; supported: object.metadata.uid, object.metadata.namespace"
            ));
        }
    };
    let (start, start_value) = hex_literal(start, "hexStart")?;
    let (end, end_value) = hex_literal(end, "hexEnd")?;
    if start_value >= end_value {
        return Err(format!(
            "shard range start {start} must be less than end {end}"
        ));
    }
    Ok(Range {
        field,
        start,
        end,
        start_value,
        end_value,
    })
}

/// `object.metadata.uid` from a chain of selections; the kind number of anything else.
fn field_path(e: &IdedExpr) -> Result<String, u8> {
    match &e.expr {
        Expr::Ident(name) => Ok(name.clone()),
        Expr::Select(s) => Ok(format!("{}.{}", field_path(&s.operand)?, s.field)),
        other => Err(kind_number(other)),
    }
}

/// Go's `%T` of a CEL literal's value.
fn go_type_name(v: &LiteralValue) -> &'static str {
    match v {
        LiteralValue::Boolean(_) => "bool",
        LiteralValue::Bytes(_) => "[]uint8",
        LiteralValue::Double(_) => "float64",
        LiteralValue::Int(_) => "int64",
        LiteralValue::Null => "structpb.NullValue",
        LiteralValue::String(_) => "string",
        LiteralValue::UInt(_) => "uint64",
    }
}

/// A bound: `0x` and 16 lowercase hex digits, or `0x10000000000000000`.
fn hex_literal(e: &IdedExpr, name: &str) -> Result<(String, u128), String> {
    let Expr::Literal(literal) = &e.expr else {
        return Err(format!(
            "{name} must be a string literal (e.g. '0xff'), got expression kind {}",
            kind_number(&e.expr)
        ));
    };
    let LiteralValue::String(s) = literal else {
        return Err(format!(
            "{name} must be a string literal, got {}",
            go_type_name(literal)
        ));
    };
    let s: &str = s.as_ref();
    let Some(hex) = s.strip_prefix("0x") else {
        return Err(format!("{name} must have '0x' prefix, got {s:?}"));
    };
    if hex.is_empty() {
        return Err(format!("{name}: hex value is required after '0x'"));
    }
    // Go counts bytes; a multi-byte character is refused below as an invalid character.
    if hex.len() > 17 {
        return Err(format!(
            "{name}: hex value too long ({} chars, max 17): {hex:?}",
            hex.len()
        ));
    }
    if let Some(c) = hex
        .chars()
        .find(|c| !c.is_ascii_digit() && !('a'..='f').contains(c))
    {
        return Err(format!(
            "{name}: invalid hex character {:?} in {s:?}",
            c.to_string()
        ));
    }
    if hex.len() == 17 {
        if s != "0x10000000000000000" {
            return Err(format!(
                "{name}: 17-digit hex value must be '0x10000000000000000' (2^64), got {s:?}"
            ));
        }
    } else if hex.len() != 16 {
        let padded = format!("0x{hex:0>16}");
        return Err(format!(
            "{name} must be a 0x-prefixed 16-digit hex value, got {s:?} (did you mean {padded:?}?)"
        ));
    }
    let value = u128::from_str_radix(hex, 16).map_err(|e| format!("{name}: {e}"))?;
    Ok((s.to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(text: &str) -> String {
        ShardSelector::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn fnv1a_of_the_empty_string_should_be_the_offset_basis() {
        assert_eq!(fnv1a_64(""), 0xcbf2_9ce4_8422_2325);
        // Published FNV-1a 64 test vectors.
        assert_eq!(fnv1a_64("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64("foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn an_empty_parameter_should_mean_no_sharding_and_a_blank_one_should_be_refused() {
        assert_eq!(ShardSelector::parse(""), Ok(None));
        assert_eq!(
            error("   "),
            "invalid shard selector: empty shard selector is not allowed; omit the parameter for unfiltered lists"
        );
    }

    #[test]
    fn ranges_should_be_start_inclusive_end_exclusive_and_joined_by_or() {
        let ns = json!({"metadata": {"name": "a"}});
        let at = |s: &str| ShardSelector::parse(s).unwrap().unwrap().matches(&ns);
        assert!(at(
            "shardRange(object.metadata.namespace, '0xcbf29ce484222325', '0xcbf29ce484222326')"
        ));
        assert!(!at(
            "shardRange(object.metadata.namespace, '0xcbf29ce484222324', '0xcbf29ce484222325')"
        ));
        assert!(at(
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001') || shardRange(object.metadata.namespace, '0xc000000000000000', '0x10000000000000000')"
        ));
        let uid = json!({"metadata": {"uid": "a"}});
        let sel = ShardSelector::parse(
            "shardRange(object.metadata.uid, '0xaf63dc4c8601ec8c', '0xaf63dc4c8601ec8d')",
        )
        .unwrap()
        .unwrap();
        assert!(sel.matches(&uid));
    }

    #[test]
    fn the_canonical_form_should_space_the_arguments_and_the_operator() {
        let sel = ShardSelector::parse(
            "shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')||shardRange(object.metadata.uid,\"0x8000000000000000\",'0x10000000000000000')",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            sel.canonical(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
        );
    }

    #[test]
    fn malformed_selectors_should_get_kube_apiserver_messages() {
        assert_eq!(
            error("hashRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"),
            "invalid shard selector: unsupported function \"hashRange\"; only shardRange() and || are allowed"
        );
        assert_eq!(
            error("shardRange(object.metadata.uid, '0x0000000000000000'"),
            "invalid shard selector: CEL parse error: Syntax error: missing ')' at '<EOF>'"
        );
        assert_eq!(
            error("shardRange(object.metadata.uid, 0, 1)"),
            "invalid shard selector: hexStart must be a string literal, got int64"
        );
        assert_eq!(
            error("shardRange(object.metadata.uid, '0x0000000000000000', 'ff')"),
            "invalid shard selector: hexEnd must have '0x' prefix, got \"ff\""
        );
        assert_eq!(
            error("shardRange(object.metadata.uid, '0x', '0x10000000000000000')"),
            "invalid shard selector: hexStart: hex value is required after '0x'"
        );
        assert_eq!(
            error("object.metadata.uid"),
            "invalid shard selector: unexpected expression kind 7; expected shardRange() call or || operator"
        );
        assert_eq!(
            error(
                "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001') && shardRange(object.metadata.uid, '0x0000000000000001', '0x10000000000000000')"
            ),
            "invalid shard selector: unsupported function \"_&&_\"; only shardRange() and || are allowed"
        );
        assert_eq!(
            error("shardRange(object.metadata.uid, '0x0', '0x10000000000000000')"),
            "invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got \"0x0\" (did you mean \"0x0000000000000000\"?)"
        );
    }
}
