//! Integers parsed as Go's `strconv` parses them, with its error wording
//! (`strconv.ParseInt: parsing "abc": invalid syntax`), which kube-apiserver puts into its
//! messages for query parameters and resource versions.

/// `strconv.ParseInt(s, 10, 64)`.
pub(crate) fn parse_int(s: &str) -> Result<i64, String> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let magnitude = unsigned(digits).map_err(|e| error("ParseInt", s, e))?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
    .ok_or_else(|| error("ParseInt", s, "value out of range"))
}

/// `strconv.ParseUint(s, 10, 64)`.
pub(crate) fn parse_uint(s: &str) -> Result<u64, String> {
    unsigned(s).map_err(|e| error("ParseUint", s, e))
}

fn unsigned(digits: &str) -> Result<u64, &'static str> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("invalid syntax");
    }
    digits.parse::<u64>().map_err(|_| "value out of range")
}

fn error(func: &str, s: &str, why: &str) -> String {
    format!("strconv.{func}: parsing {}: {why}", go_quote(s))
}

/// `strconv.Quote` for the printable ASCII that query parameters mostly hold; other characters
/// are escaped as Go escapes them.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%v` of a float64: `strconv.FormatFloat(f, 'g', -1, 64)` but with an exponent only from
/// 1e21 (and below 1e-4).
pub(crate) fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_should_parse_and_fail_as_in_go() {
        assert_eq!(parse_int("-1"), Ok(-1));
        assert_eq!(parse_int("+7"), Ok(7));
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(
            parse_int("abc"),
            Err("strconv.ParseInt: parsing \"abc\": invalid syntax".into())
        );
        assert_eq!(
            parse_int(""),
            Err("strconv.ParseInt: parsing \"\": invalid syntax".into())
        );
        assert_eq!(
            parse_int("9223372036854775808"),
            Err("strconv.ParseInt: parsing \"9223372036854775808\": value out of range".into())
        );
        assert_eq!(parse_uint("12"), Ok(12));
        assert_eq!(
            parse_uint("-1"),
            Err("strconv.ParseUint: parsing \"-1\": invalid syntax".into())
        );
        assert_eq!(
            parse_uint("a\"b"),
            Err("strconv.ParseUint: parsing \"a\\\"b\": invalid syntax".into())
        );
    }
}
