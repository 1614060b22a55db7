//! Label selectors (the full `labels.Parse` syntax) and field selectors.

use serde_json::Value;

use crate::registry::field_labels::FieldLabels;
use crate::status::{ApiError, ApiResult};

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq,
    NotEq,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

#[derive(Debug, Clone, PartialEq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (f,g),!h,i,j>3` as `labels.Parse` does (see
    /// [`crate::wire::labels_parser`]), with its error messages.
    pub(crate) fn parse(input: &str) -> ApiResult<Self> {
        use crate::wire::labels_parser::{self, Operator};
        // `labels.NewRequirement`'s checks, as `field.Invalid` errors without a root path.
        let check = |r: &labels_parser::Requirement| -> Result<(), String> {
            let key_errors = crate::validation::names::qualified_name(&r.key);
            if !key_errors.is_empty() {
                return Err(format!(
                    "<nil>: Invalid value: {:?}: {}",
                    r.key,
                    key_errors.join("; ")
                ));
            }
            if matches!(r.op, Operator::GreaterThan | Operator::LessThan)
                && let Some(v) = r.values.first()
                && v.parse::<i64>().is_err()
            {
                return Err(format!(
                    "values[0]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
                ));
            }
            for (i, v) in r.values.iter().enumerate() {
                let errors = crate::validation::names::label_value(v);
                if !errors.is_empty() {
                    return Err(format!(
                        "values[{i}][{}]: Invalid value: {v:?}: {}",
                        r.key,
                        errors.join("; ")
                    ));
                }
            }
            Ok(())
        };
        let parsed = labels_parser::parse(input, check).map_err(ApiError::bad_request)?;
        let requirements = parsed
            .into_iter()
            .map(|r| Requirement {
                key: r.key,
                op: match r.op {
                    Operator::Equals => Op::Eq,
                    Operator::NotEquals => Op::NotEq,
                    Operator::In => Op::In,
                    Operator::NotIn => Op::NotIn,
                    Operator::Exists => Op::Exists,
                    Operator::DoesNotExist => Op::DoesNotExist,
                    Operator::GreaterThan => Op::Gt,
                    Operator::LessThan => Op::Lt,
                },
                values: r.values,
            })
            .collect();
        Ok(Self { requirements })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether the object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        let labels = obj.get("metadata").and_then(|m| m.get("labels"));
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.requirements.iter().all(|r| {
            let v = get(&r.key);
            match r.op {
                Op::Eq | Op::In => v.is_some_and(|v| r.values.iter().any(|x| x == v)),
                Op::NotEq | Op::NotIn => v.is_none_or(|v| r.values.iter().all(|x| x != v)),
                Op::Exists => v.is_some(),
                Op::DoesNotExist => v.is_none(),
                Op::Gt | Op::Lt => {
                    let (Some(v), Some(bound)) = (
                        v.and_then(|v| v.parse::<i64>().ok()),
                        r.values.first().and_then(|b| b.parse::<i64>().ok()),
                    ) else {
                        return false;
                    };
                    if r.op == Op::Gt { v > bound } else { v < bound }
                }
            }
        })
    }
}

/// A parsed field selector (`metadata.name=x,metadata.namespace!=y`), with the kind's field
/// labels (see [`FieldLabels`]) that give each object's values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldSelector {
    terms: Vec<(String, bool, String)>,
    labels: FieldLabels,
}

/// Splits a field selector at its unescaped commas, as `fields.ParseSelector` does.
fn split_terms(input: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in input.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&input[start..i]);
            start = i + 1;
        }
    }
    terms.push(&input[start..]);
    terms
}

/// A term's field, operator (`true`: equal) and value: the first position where `!=`, `==` or
/// `=` starts.
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, equal) in [("!=", false), ("==", true), ("=", true)] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], equal, value));
            }
        }
    }
    None
}

/// A term's value with its escapes (`\\`, `\,`, `\=`) resolved, or `fields.UnescapeValue`'s
/// error.
fn unescape_value(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    u32::from(c)
                ));
            }
            c => out.push(c),
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".into());
    }
    Ok(out)
}

impl Default for FieldSelector {
    /// The empty selector of a kind without field labels of its own: it matches everything.
    fn default() -> Self {
        Self {
            terms: Vec::new(),
            labels: FieldLabels::metadata(),
        }
    }
}

impl FieldSelector {
    /// Parses a field selector as `fields.ParseSelector` does (terms sorted, values unescaped,
    /// nothing trimmed), then converts each field label by the kind's conversion (`labels`),
    /// with their errors as `400 BadRequest`.
    pub(crate) fn parse(input: &str, labels: FieldLabels) -> ApiResult<Self> {
        let mut parts = split_terms(input);
        parts.sort_unstable();
        let mut parsed = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((field, equal, value)) = split_term(part) else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            let value = unescape_value(value).map_err(ApiError::bad_request)?;
            parsed.push((field, equal, value));
        }
        let mut terms = Vec::with_capacity(parsed.len());
        for (field, equal, value) in parsed {
            let field = labels.convert(field).map_err(ApiError::bad_request)?;
            terms.push((field, equal, value));
        }
        Ok(Self { terms, labels })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The selector with the fields `rename` names differently in storage renamed.
    #[must_use]
    pub(crate) fn renamed(mut self, rename: impl Fn(&str) -> Option<String>) -> Self {
        for (field, _, _) in &mut self.terms {
            if let Some(stored) = rename(field) {
                *field = stored;
            }
        }
        self
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.terms
            .iter()
            .all(|(field, equal, value)| (self.labels.value(obj, field) == *value) == *equal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_selectors_should_support_the_full_syntax() {
        let o = obj(json!({"app": "web", "tier": "front", "n": "5"}));
        let yes = [
            "",
            "app=web",
            "app==web",
            "app!=db",
            "app in (web, db)",
            "tier notin (back)",
            "app",
            "!missing",
            "n>3",
            "n<6",
            "app=web,tier=front",
            "missing!=x",
        ];
        for s in yes {
            assert!(
                LabelSelector::parse(s).unwrap().matches(&o),
                "{s} should match"
            );
        }
        let no = [
            "app=db",
            "app in (db)",
            "app notin (web)",
            "!app",
            "missing",
            "n>5",
            "app=web,tier=back",
        ];
        for s in no {
            assert!(
                !LabelSelector::parse(s).unwrap().matches(&o),
                "{s} should not match"
            );
        }
    }

    #[test]
    fn malformed_label_selectors_should_be_rejected() {
        for s in [
            "app=(",
            "app in web",
            "a b",
            "n>x",
            "app=web,",
            "-bad=x",
            "app in (a",
        ] {
            assert!(LabelSelector::parse(s).is_err(), "{s} should be rejected");
        }
    }

    #[test]
    fn field_selectors_should_match_names_and_namespaces_and_refuse_other_fields() {
        let o = obj(json!({}));
        let meta = FieldLabels::metadata;
        assert!(
            FieldSelector::parse("metadata.name=n", meta())
                .unwrap()
                .matches(&o)
        );
        assert!(
            FieldSelector::parse("metadata.namespace!=x", meta())
                .unwrap()
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name==m", meta())
                .unwrap()
                .matches(&o)
        );
        assert_eq!(
            FieldSelector::parse("spec.x=1", meta())
                .unwrap_err()
                .message,
            "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(
            FieldSelector::parse("spec.y=1", FieldLabels::with_fields(&["spec.x"]))
                .unwrap_err()
                .message,
            "field label not supported: spec.y"
        );
        assert!(FieldSelector::parse("spec.x=1", FieldLabels::with_fields(&["spec.x"])).is_ok());
    }

    #[test]
    fn field_selector_values_should_be_unescaped_as_go_does() {
        let o = json!({"metadata": {"name": "a,b=c"}});
        let meta = FieldLabels::metadata;
        assert!(
            FieldSelector::parse(r"metadata.name=a\,b\=c", meta())
                .unwrap()
                .matches(&o)
        );
        let err = |s: &str| FieldSelector::parse(s, meta()).unwrap_err().message;
        assert_eq!(
            err("metadata.name=a=b"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            err(r"metadata.name=a\x"),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            err("metadata.name"),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
        // Terms are sorted before their labels are converted: the first refused label in that
        // order is named.
        assert_eq!(
            err("z.b=1,a.b=1"),
            "\"a.b\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        // Nothing is trimmed: a space before the operator is part of the label.
        assert!(FieldSelector::parse("metadata.name =n", meta()).is_err());
    }
}
