//! The CEL environment kcr-testenv evaluates Kubernetes expressions in (CRD validation rules,
//! ValidatingAdmissionPolicies): the `cel` crate's standard library with its strings, lists
//! and math extensions, plus the parts of Kubernetes' own CEL libraries that are plain
//! functions on lists and strings:
//!
//! - lists (`k8s.io/apiserver/pkg/cel/library/lists.go`): `isSorted()`, `sum()`, `min()`,
//!   `max()`, `indexOf(x)`, `lastIndexOf(x)` on lists;
//! - regex: `find(re)`, `findAll(re)`, `findAll(re, n)` on strings;
//! - sets (cel-go's `ext.Sets`): `sets.contains(a, b)`, `sets.intersects(a, b)`,
//!   `sets.equivalent(a, b)`.
//!
//! Not ported: the `quantity`, `url`, `ip`, `cidr`, `format`, `semver` and `authorizer`
//! libraries, two-variable comprehensions, and timestamps and durations (the `cel` crate is
//! built without `chrono`).

use std::sync::{Arc, LazyLock};

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{ExecutionError, Value};

/// The environment.
pub(crate) static ENV: LazyLock<Arc<cel::Env>> = LazyLock::new(|| {
    let mut env = cel::Env::stdlib();
    for ext in [
        cel::extensions::strings as fn(&mut cel::Env) -> _,
        cel::extensions::lists,
        cel::extensions::math,
        kubernetes,
    ] {
        let _ = env.add_extension(ext);
    }
    Arc::new(env)
});

type Values = Vec<Value>;
type List = Arc<Vec<Value>>;

/// Runs `f` on the arguments as [`Value`]s.
fn with_values<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    f: fn(Values) -> Result<Value, ExecutionError>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let values = args
        .iter()
        .map(|a| Value::try_from(a.as_ref()))
        .collect::<Result<Values, _>>()?;
    let out: Box<dyn Val> = f(values)?.try_into()?;
    Ok(CowVal::from(out))
}

macro_rules! function {
    ($name:ident, $body:ident) => {
        fn $name<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
            with_values(args, $body)
        }
    };
}

fn list_of(v: &Value, function: &str) -> Result<List, ExecutionError> {
    match v {
        Value::List(l) => Ok(l.clone()),
        other => Err(ExecutionError::function_error(
            function,
            format!("expected a list, got {other:?}"),
        )),
    }
}

fn compare(a: &Value, b: &Value, function: &str) -> Result<std::cmp::Ordering, ExecutionError> {
    a.partial_cmp(b)
        .ok_or_else(|| ExecutionError::no_such_overload(function, vec![]))
}

fn is_sorted_of(args: Values) -> Result<Value, ExecutionError> {
    let list = list_of(&args[0], "isSorted")?;
    for pair in list.windows(2) {
        if compare(&pair[0], &pair[1], "isSorted")? == std::cmp::Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn sum_of(args: Values) -> Result<Value, ExecutionError> {
    let list = list_of(&args[0], "sum")?;
    let mut total = match list.first() {
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::UInt(_)) => Value::UInt(0),
        _ => Value::Int(0),
    };
    for v in list.iter() {
        total = match (&total, v) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => Value::UInt(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return Err(ExecutionError::no_such_overload("sum", vec![])),
        };
    }
    Ok(total)
}

fn extreme(args: Values, name: &str, want: std::cmp::Ordering) -> Result<Value, ExecutionError> {
    let list = list_of(&args[0], name)?;
    let mut best = list.first().cloned().ok_or_else(|| {
        ExecutionError::function_error(name, format!("{name}(list) argument must not be empty"))
    })?;
    for v in list.iter().skip(1) {
        if compare(v, &best, name)? == want {
            best = v.clone();
        }
    }
    Ok(best)
}

fn min_of(args: Values) -> Result<Value, ExecutionError> {
    extreme(args, "min", std::cmp::Ordering::Less)
}

fn max_of(args: Values) -> Result<Value, ExecutionError> {
    extreme(args, "max", std::cmp::Ordering::Greater)
}

fn position(args: Values, last: bool) -> Result<Value, ExecutionError> {
    let list = list_of(&args[0], "indexOf")?;
    let found = if last {
        list.iter().rposition(|v| *v == args[1])
    } else {
        list.iter().position(|v| *v == args[1])
    };
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn index_of(args: Values) -> Result<Value, ExecutionError> {
    position(args, false)
}

fn last_index_of(args: Values) -> Result<Value, ExecutionError> {
    position(args, true)
}

fn string_of(v: &Value, function: &str) -> Result<Arc<String>, ExecutionError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(ExecutionError::function_error(
            function,
            format!("expected a string, got {other:?}"),
        )),
    }
}

fn regex_of(v: &Value, function: &str) -> Result<regex::Regex, ExecutionError> {
    let pattern = string_of(v, function)?;
    regex::Regex::new(&pattern).map_err(|e| ExecutionError::function_error(function, e))
}

fn find_of(args: Values) -> Result<Value, ExecutionError> {
    let s = string_of(&args[0], "find")?;
    let re = regex_of(&args[1], "find")?;
    Ok(Value::String(Arc::new(
        re.find(&s)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default(),
    )))
}

fn find_all_of(args: Values) -> Result<Value, ExecutionError> {
    let s = string_of(&args[0], "findAll")?;
    let re = regex_of(&args[1], "findAll")?;
    let limit = match args.get(2) {
        Some(Value::Int(n)) if *n >= 0 => Some(*n as usize),
        _ => None,
    };
    let found: Vec<Value> = re
        .find_iter(&s)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}

fn two_lists(args: &Values, name: &str) -> Result<(List, List), ExecutionError> {
    Ok((list_of(&args[0], name)?, list_of(&args[1], name)?))
}

fn sets_contains(args: Values) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.contains")?;
    Ok(Value::Bool(b.iter().all(|x| a.contains(x))))
}

fn sets_intersects(args: Values) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.intersects")?;
    Ok(Value::Bool(b.iter().any(|x| a.contains(x))))
}

fn sets_equivalent(args: Values) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(&args, "sets.equivalent")?;
    Ok(Value::Bool(
        b.iter().all(|x| a.contains(x)) && a.iter().all(|x| b.contains(x)),
    ))
}

function!(is_sorted, is_sorted_of);
function!(sum, sum_of);
function!(min, min_of);
function!(max, max_of);
function!(list_index_of, index_of);
function!(list_last_index_of, last_index_of);
function!(find, find_of);
function!(find_all, find_all_of);
function!(contains, sets_contains);
function!(intersects, sets_intersects);
function!(equivalent, sets_equivalent);

/// Registers the Kubernetes functions on `env`.
fn kubernetes(env: &mut cel::Env) -> Result<(), cel::DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        list_last_index_of,
    )?;
    env.add_member_overload("find", "string_find", STRING_TYPE, vec![STRING_TYPE], find)?;
    env.add_member_overload(
        "findAll",
        "string_find_all",
        STRING_TYPE,
        vec![STRING_TYPE],
        find_all,
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_n",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        find_all,
    )?;
    env.add_overload(
        "sets.contains",
        "sets_contains",
        vec![LIST_TYPE, LIST_TYPE],
        contains,
    )?;
    env.add_overload(
        "sets.intersects",
        "sets_intersects",
        vec![LIST_TYPE, LIST_TYPE],
        intersects,
    )?;
    env.add_overload(
        "sets.equivalent",
        "sets_equivalent",
        vec![LIST_TYPE, LIST_TYPE],
        equivalent,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(e: &str) -> Result<Value, String> {
        let ctx = cel::Context::with_env(ENV.clone());
        let p = ENV.compile(e).map_err(|e| e.to_string())?;
        p.execute(&ctx).map_err(|e| e.to_string())
    }

    #[test]
    fn the_kubernetes_functions_should_evaluate() {
        for e in [
            "[1, 2, 3].isSorted()",
            "!([2, 1].isSorted())",
            "['a', 'b'].isSorted()",
            "[1, 2, 3].sum() == 6",
            "[1.5, 2.5].sum() == 4.0",
            "[].sum() == 0",
            "[3, 1, 2].min() == 1",
            "[3, 1, 2].max() == 3",
            "['b', 'a'].min() == 'a'",
            "[1, 2, 1].indexOf(1) == 0",
            "[1, 2, 1].lastIndexOf(1) == 2",
            "[1, 2].indexOf(5) == -1",
            "'abc'.indexOf('c') == 2",
            "'abcabc'.lastIndexOf('b') == 4",
            "'abc123'.find('[0-9]+') == '123'",
            "'abc'.find('[0-9]+') == ''",
            "'a1b2c3'.findAll('[0-9]') == ['1', '2', '3']",
            "'a1b2c3'.findAll('[0-9]', 2) == ['1', '2']",
            "sets.contains([1, 2, 3], [1, 3])",
            "!sets.contains([1], [2])",
            "sets.intersects([1, 2], [2, 5])",
            "sets.equivalent([1, 2, 2], [2, 1])",
        ] {
            assert_eq!(eval(e), Ok(Value::Bool(true)), "{e}");
        }
        assert!(eval("[].min()").is_err());
    }
}
