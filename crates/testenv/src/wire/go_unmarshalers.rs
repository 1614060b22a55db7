//! The checks of the apimachinery types that decode JSON themselves, with their errors:
//! `resource.Quantity` (`ParseQuantity`), `v1.Time` and `v1.MicroTime` (Go's `time.Parse` with
//! the RFC 3339 layouts).

/// `ParseQuantity`'s error for text that is not a quantity.
pub(crate) const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";
const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";

/// Whether `s` is a quantity, as `resource.ParseQuantity` decides, with its error.
pub(crate) fn parse_quantity(s: &str) -> Result<(), &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    if end == 0 {
        return Err(QUANTITY_FORMAT);
    }
    let skip_digits = |mut pos: usize| {
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        pos
    };
    let mut pos = usize::from(matches!(b[0], b'-' | b'+'));
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    let num_start = pos;
    pos = skip_digits(pos);
    if pos == end {
        return Ok(());
    }
    // An empty numerator counts as `0`.
    let num_len = (pos - num_start).max(1);
    let mut denom_len = 0;
    if b[pos] == b'.' {
        let denom_start = pos + 1;
        pos = skip_digits(denom_start);
        if pos == end {
            return Ok(());
        }
        denom_len = pos - denom_start;
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end {
        if matches!(b[pos], b'-' | b'+') {
            pos += 1;
        }
        if skip_digits(pos) != end {
            return Err(QUANTITY_FORMAT);
        }
    }
    let suffix = &s[suffix_start..];
    let decimal = |e: i64| Some((false, e));
    let (binary, exponent) = match suffix {
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "" => decimal(0),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => Some((true, 10)),
        "Mi" => Some((true, 20)),
        "Gi" => Some((true, 30)),
        "Ti" => Some((true, 40)),
        "Pi" => Some((true, 50)),
        "Ei" => Some((true, 60)),
        _ if suffix.len() > 1 && matches!(b[suffix_start], b'e' | b'E') => {
            super::go_strconv::parse_int(&suffix[1..])
                .ok()
                // Go keeps the low 32 bits.
                .map(|e| (false, i64::from(e as i32)))
        }
        _ => None,
    }
    .ok_or(QUANTITY_SUFFIX)?;
    // Small values go the integer way; others are parsed as a decimal, which needs a digit.
    let fast = if binary {
        denom_len == 0
    } else {
        num_len + denom_len <= 18 && exponent - denom_len as i64 >= -9
    };
    if fast || value.bytes().any(|c| c.is_ascii_digit()) {
        Ok(())
    } else {
        Err(QUANTITY_NUMERIC)
    }
}

/// Go's `time.RFC3339` layout, which `v1.Time` reads.
pub(crate) const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
/// `metav1.RFC3339Micro`, which `v1.MicroTime` reads.
pub(crate) const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

/// The parts of the two layouts: the literal text before an element, and the element.
const CHUNKS: &[(&str, &str)] = &[
    ("", "2006"),
    ("-", "01"),
    ("-", "02"),
    ("T", "15"),
    (":", "04"),
    (":", "05"),
];

/// `time.Parse(layout, value)` for [`RFC3339`] and [`RFC3339_MICRO`], with Go's error.
pub(crate) fn parse_time(layout: &str, value: &str) -> Result<(), String> {
    let micro = layout == RFC3339_MICRO;
    let cannot = |layout_elem: &str, value_elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(value),
            quote(layout),
            quote(value_elem),
            quote(layout_elem)
        )
    };
    let out_of_range = |what: &str| format!("parsing time {}: {what} out of range", quote(value));
    let mut rest = value;
    let mut fields = [0u32; 6];
    for (i, (prefix, elem)) in CHUNKS.iter().enumerate() {
        let Some(r) = rest.strip_prefix(prefix) else {
            // Go reports the literal from where the text stops matching it.
            return Err(cannot(prefix, rest));
        };
        rest = r;
        let hold = rest;
        let b = rest.as_bytes();
        let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
        let n = if i == 0 {
            // The year: four characters, the first a digit.
            let ok = b.len() >= 4 && digit(0);
            let year = ok
                .then(|| rest.get(..4))
                .flatten()
                .and_then(|y| y.parse::<u32>().ok())
                .filter(|_| rest[..4].bytes().all(|c| c.is_ascii_digit()));
            match year {
                Some(y) => {
                    rest = &rest[4..];
                    y
                }
                None => return Err(cannot(elem, hold)),
            }
        } else {
            // Two digits; the hour may have one.
            let fixed = *elem != "15";
            if !digit(0) || (!digit(1) && fixed) {
                return Err(cannot(elem, hold));
            }
            let width = if digit(1) { 2 } else { 1 };
            let n = rest[..width].parse::<u32>().unwrap_or(0);
            rest = &rest[width..];
            n
        };
        fields[i] = n;
        let range = match *elem {
            "01" if !(1..=12).contains(&n) => Some("month"),
            "15" if n >= 24 => Some("hour"),
            "04" if n >= 60 => Some("minute"),
            "05" if n >= 60 => Some("second"),
            _ => None,
        };
        if let Some(what) = range {
            return Err(out_of_range(what));
        }
    }
    let frac = |rest: &str| {
        let b = rest.as_bytes();
        if b.len() >= 2 && matches!(b[0], b'.' | b',') && b[1].is_ascii_digit() {
            let n = 1 + b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            Some(n)
        } else {
            None
        }
    };
    if micro {
        // Exactly six digits of fractional seconds.
        let b = rest.as_bytes();
        let ok =
            b.len() >= 7 && matches!(b[0], b'.' | b',') && b[1..7].iter().all(u8::is_ascii_digit);
        if !ok {
            return Err(cannot(".000000", rest));
        }
        rest = &rest[7..];
    } else if let Some(n) = frac(rest) {
        // Fractional seconds the layout does not name are accepted after the seconds.
        rest = &rest[n..];
    }
    // The zone: `Z` or `±hh:mm`.
    if let Some(r) = rest.strip_prefix('Z') {
        rest = r;
    } else {
        let b = rest.as_bytes();
        let two = |i: usize| b[i].is_ascii_digit() && b[i + 1].is_ascii_digit();
        let ok = b.len() >= 6 && b[3] == b':' && two(1) && two(4) && matches!(b[0], b'+' | b'-');
        if !ok {
            return Err(cannot("Z07:00", rest));
        }
        let hours = rest[1..3].parse::<u32>().unwrap_or(0);
        let minutes = rest[4..6].parse::<u32>().unwrap_or(0);
        if hours > 24 {
            return Err(out_of_range("time zone offset hour"));
        }
        if minutes > 60 {
            return Err(out_of_range("time zone offset minute"));
        }
        rest = &rest[6..];
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(value),
            quote(rest)
        ));
    }
    let [year, month, day, ..] = fields;
    if day < 1 || day > days_in(month, year) {
        return Err(out_of_range("day"));
    }
    Ok(())
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A string as the `time` package quotes it in errors: non-ASCII and control bytes as `\x..`.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s.as_bytes() {
        match c {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(char::from(c));
            }
            c if !(b' '..0x80).contains(&c) => out.push_str(&format!("\\x{c:02x}")),
            c => out.push(char::from(c)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_should_be_parsed_as_parse_quantity_does() {
        for ok in [
            "0", "1", "100m", "1.5", "-2Gi", "+3k", "1e3", "1E-3", "5.", ".5", "1.5Mi", "007",
            "Ki", ".",
        ] {
            assert_eq!(parse_quantity(ok), Ok(()), "{ok}");
        }
        for (bad, want) in [
            ("", QUANTITY_FORMAT),
            ("abc", QUANTITY_FORMAT),
            ("true", QUANTITY_FORMAT),
            ("{\"a\":1}", QUANTITY_FORMAT),
            ("1 Gi", QUANTITY_FORMAT),
            ("1x", QUANTITY_FORMAT),
            ("1Ki2", QUANTITY_SUFFIX),
            ("1KiB", QUANTITY_FORMAT),
            ("1mm", QUANTITY_SUFFIX),
            ("1e", QUANTITY_SUFFIX),
            ("-.e-10", QUANTITY_NUMERIC),
        ] {
            assert_eq!(parse_quantity(bad), Err(want), "{bad}");
        }
    }

    #[test]
    fn times_should_be_parsed_as_go_parses_rfc3339() {
        for ok in [
            "2024-02-29T23:59:59Z",
            "2024-01-02T03:04:05.123Z",
            "2024-01-02T3:04:05+02:00",
        ] {
            assert_eq!(parse_time(RFC3339, ok), Ok(()), "{ok}");
        }
        assert_eq!(
            parse_time(RFC3339_MICRO, "2024-01-02T03:04:05.123456Z"),
            Ok(())
        );
        let cases = [
            (
                RFC3339,
                "yesterday",
                r#"parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#,
            ),
            (
                RFC3339,
                "2024-01-02",
                r#"parsing time "2024-01-02" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T""#,
            ),
            (
                RFC3339,
                "2024-1-02T03:04:05Z",
                r#"parsing time "2024-1-02T03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse "1-02T03:04:05Z" as "01""#,
            ),
            (
                RFC3339,
                "2024-13-02T03:04:05Z",
                r#"parsing time "2024-13-02T03:04:05Z": month out of range"#,
            ),
            (
                RFC3339,
                "2023-02-29T03:04:05Z",
                r#"parsing time "2023-02-29T03:04:05Z": day out of range"#,
            ),
            (
                RFC3339,
                "2024-01-02T03:04:05",
                r#"parsing time "2024-01-02T03:04:05" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#,
            ),
            (
                RFC3339,
                "2024-01-02T03:04:05Zx",
                r#"parsing time "2024-01-02T03:04:05Zx": extra text: "x""#,
            ),
            (
                RFC3339_MICRO,
                "2024-01-02T03:04:05Z",
                r#"parsing time "2024-01-02T03:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#,
            ),
        ];
        for (layout, value, want) in cases {
            assert_eq!(parse_time(layout, value).unwrap_err(), want, "{value}");
        }
    }
}
