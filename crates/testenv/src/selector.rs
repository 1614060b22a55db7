//! Label selectors (the full `labels.Parse` syntax) and field selectors.

use serde_json::Value;

use crate::meta::field_string;
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

fn is_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
            && v.as_bytes()[0].is_ascii_alphanumeric()
            && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric())
}

fn is_label_key(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if let Some(p) = prefix
        && !crate::meta::is_dns_subdomain(p)
    {
        return false;
    }
    !name.is_empty() && is_label_value(name)
}

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (f,g),!h,i,j>3` as `labels.Parse` does (see
    /// [`crate::wire::labels_parser`]), with its error messages.
    pub(crate) fn parse(input: &str) -> ApiResult<Self> {
        use crate::wire::labels_parser::{self, Operator};
        let check = |r: &labels_parser::Requirement| -> Result<(), String> {
            if !is_label_key(&r.key) {
                return Err(format!("invalid label key {:?}", r.key));
            }
            if let Some(v) = r.values.iter().find(|v| !is_label_value(v)) {
                return Err(format!("invalid label value: {v:?}"));
            }
            if matches!(r.op, Operator::GreaterThan | Operator::LessThan)
                && r.values
                    .first()
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_none()
            {
                return Err("for 'Gt', 'Lt' operators, the value must be an integer".into());
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

/// A parsed field selector (`metadata.name=x,metadata.namespace!=y`).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FieldSelector {
    terms: Vec<(String, bool, String)>,
}

impl FieldSelector {
    /// Parses a field selector; only `metadata.name`, `metadata.namespace` and `extra` fields are
    /// supported, as each resource's field label conversion allows.
    pub(crate) fn parse(input: &str, extra: &[&str]) -> ApiResult<Self> {
        let mut terms = Vec::new();
        for part in input.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = part.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{input}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            if field != "metadata.name" && field != "metadata.namespace" && !extra.contains(&field)
            {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self { terms })
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
            .all(|(field, equal, value)| (field_string(obj, field) == *value) == *equal)
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
        assert!(
            FieldSelector::parse("metadata.name=n", &[])
                .unwrap()
                .matches(&o)
        );
        assert!(
            FieldSelector::parse("metadata.namespace!=x", &[])
                .unwrap()
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.name==m", &[])
                .unwrap()
                .matches(&o)
        );
        assert!(FieldSelector::parse("spec.x=1", &[]).is_err());
        assert!(FieldSelector::parse("spec.x=1", &["spec.x"]).is_ok());
    }
}
