//! The schedule check of a CronJob: what the standard cron parser kube-apiserver validates
//! `spec.schedule` with accepts (five fields, minute to day of week, with ranges, steps,
//! lists and month/day names; the `@yearly` ... `@hourly` descriptors and `@every <duration>`;
//! an optional `TZ=` / `CRON_TZ=` prefix), and the first thing it finds wrong, worded as that
//! parser words it. Only the parse: nothing here computes times.

use super::time_zones;
use crate::wire::go_strconv::go_quote;

/// The range of one field and the names it accepts besides numbers.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const SECONDS: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS_OF_MONTH: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.Atoi: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {}: value out of range", go_quote(s)))
}

/// A non-negative number of a field.
fn parse_int(expr: &str) -> Result<u64, String> {
    let n = atoi(expr).map_err(|e| format!("failed to parse int from {expr}: {e}"))?;
    u64::try_from(n).map_err(|_| format!("negative number ({n}) not allowed: {expr}"))
}

fn parse_int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    if let Some((_, n)) = bounds.names.iter().find(|(name, _)| *name == lower) {
        return Ok(*n);
    }
    parse_int(expr)
}

/// One range of a field: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn check_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = parse_int_or_name(low_and_high[0], bounds)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], bounds)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = parse_int(range_and_step[1])?;
            if single {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// A field: a comma-separated list of ranges (empty items skipped).
fn check_field(field: &str, bounds: &Bounds) -> Result<(), String> {
    field
        .split(',')
        .filter(|r| !r.is_empty())
        .try_for_each(|r| check_range(r, bounds))
}

/// Go's `time.ParseDuration`, for `@every`.
fn check_duration(orig: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {}", go_quote(orig));
    let mut s = orig.strip_prefix(['+', '-']).unwrap_or(orig);
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: f64 = 0.0;
    while !s.is_empty() {
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let (int, rest) = s.split_at(int_len);
        s = rest;
        let mut frac = "";
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            frac = &rest[..frac_len];
            s = &rest[frac_len..];
        }
        if int.is_empty() && frac.is_empty() {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {}", go_quote(orig)));
        }
        let nanos: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    go_quote(unit),
                    go_quote(orig)
                ));
            }
        };
        let value: f64 = format!("{}.{}", if int.is_empty() { "0" } else { int }, frac)
            .trim_end_matches('.')
            .parse()
            .map_err(|_| invalid())?;
        total += value * nanos;
        if total > i64::MAX as f64 {
            return Err(invalid());
        }
    }
    Ok(())
}

fn check_descriptor(descriptor: &str) -> Result<(), String> {
    match descriptor {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => {
            Ok(())
        }
        _ => match descriptor.strip_prefix("@every ") {
            Some(duration) => check_duration(duration)
                .map_err(|e| format!("failed to parse duration {descriptor}: {e}")),
            None => Err(format!("unrecognized descriptor: {descriptor}")),
        },
    }
}

/// Whether `name` is a time zone Go's `time.LoadLocation` loads (`UTC` and the tz database's
/// names; `Local` too, which the CronJob rules refuse on their own).
pub(crate) fn known_time_zone(name: &str) -> bool {
    name == "Local" || name == "UTC" || time_zones::NAMES.binary_search(&name).is_ok()
}

/// `time.LoadLocation`'s error for `name`, if it has one.
pub(crate) fn load_location_error(name: &str) -> Option<String> {
    if name.is_empty() || known_time_zone(name) {
        return None;
    }
    if name.contains("..") || name.starts_with(['/', '\\']) {
        return Some("time: invalid location name".into());
    }
    Some(format!("unknown time zone {name}"))
}

/// The standard parser's error for `schedule`, if it has one. `None` also for a `TZ=` prefix
/// without a space after it, where the parser does not answer with an error.
pub(crate) fn parse_error(schedule: &str) -> Option<String> {
    if schedule.is_empty() {
        return Some("empty spec string".into());
    }
    let mut spec = schedule;
    if schedule.starts_with("TZ=") || schedule.starts_with("CRON_TZ=") {
        let space = schedule.find(' ')?;
        let eq = schedule.find('=').unwrap_or_default();
        let location = schedule.get(eq + 1..space)?;
        if let Some(err) = load_location_error(location) {
            return Some(format!("provided bad location {location}: {err}"));
        }
        spec = schedule[space..].trim();
    }
    if spec.starts_with('@') {
        return check_descriptor(spec).err();
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Some(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let checks = [
        ("0", &SECONDS),
        (fields[0], &MINUTES),
        (fields[1], &HOURS),
        (fields[2], &DAYS_OF_MONTH),
        (fields[3], &MONTHS),
        (fields[4], &DAYS_OF_WEEK),
    ];
    checks
        .into_iter()
        .find_map(|(field, bounds)| check_field(field, bounds).err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_schedules_should_parse() {
        for s in [
            "* * * * *",
            "*/5 * * * *",
            "0 3 * * 1-5",
            "0 0 1 jan,JUL *",
            "15 10 ? * SUN",
            "0-30/10 8-18 1,15 */2 mon-fri",
            "@hourly",
            "@every 1h30m",
            "@every 1.5s",
            "CRON_TZ=Europe/Paris 0 3 * * *",
            "TZ=UTC @daily",
        ] {
            assert_eq!(parse_error(s), None, "{s}");
        }
    }

    #[test]
    fn invalid_schedules_should_be_worded_as_the_parser_words_them() {
        for (s, want) in [
            ("61 * * * *", "end of range (61) above maximum (59): 61"),
            ("* * *", "expected exactly 5 fields, found 3: [* * *]"),
            (
                "* * * * * *",
                "expected exactly 5 fields, found 6: [* * * * * *]",
            ),
            ("* 24 * * *", "end of range (24) above maximum (23): 24"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-2 * * * *",
                "beginning of range (5) beyond end of range (2): 5-2",
            ),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("*/2/3 * * * *", "too many slashes: */2/3"),
            (
                "* * * foo *",
                "failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax",
            ),
            ("*/-1 * * * *", "negative number (-1) not allowed: -1"),
            ("@fortnightly", "unrecognized descriptor: @fortnightly"),
            (
                "@every 1x",
                "failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\"",
            ),
            (
                "@every 10",
                "failed to parse duration @every 10: time: missing unit in duration \"10\"",
            ),
            (
                "TZ=Mars/Olympus * * * * *",
                "provided bad location Mars/Olympus: unknown time zone Mars/Olympus",
            ),
        ] {
            assert_eq!(parse_error(s).as_deref(), Some(want), "{s}");
        }
    }

    #[test]
    fn time_zones_should_be_those_of_the_tz_database() {
        for tz in [
            "UTC",
            "Europe/Paris",
            "America/New_York",
            "US/Eastern",
            "Etc/GMT+5",
        ] {
            assert!(known_time_zone(tz), "{tz}");
        }
        assert_eq!(
            load_location_error("Europe/Pariss").as_deref(),
            Some("unknown time zone Europe/Pariss")
        );
        assert_eq!(
            load_location_error("a..b").as_deref(),
            Some("time: invalid location name")
        );
        let mut sorted = time_zones::NAMES.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, time_zones::NAMES);
    }
}
