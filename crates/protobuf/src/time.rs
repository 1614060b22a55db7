//! `metav1.Time` and `metav1.MicroTime` (`seconds` = 1, `nanos` = 2) and their RFC 3339 forms.

use crate::error::{Error, Result};
use crate::wire::Reader;

/// The last second Go's JSON encoding of a time accepts (9999-12-31T23:59:59Z).
const MAX_SECONDS: i64 = 253_402_300_799;

/// Reads a time message: `None` for the zero time (which JSON leaves out).
pub(crate) fn read(b: &[u8]) -> Result<Option<(u64, u32)>> {
    let (mut secs, mut nanos) = (0i64, 0i64);
    for f in Reader::new(b) {
        let f = f?;
        #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
        match f.number {
            1 => secs = f.varint as i64,
            2 => nanos = i64::from(f.varint as i32),
            _ => {}
        }
    }
    if secs == 0 && nanos == 0 {
        return Ok(None);
    }
    // As Go's time.Unix: nanoseconds out of range carry into the seconds.
    let secs = secs.checked_add(nanos.div_euclid(1_000_000_000));
    let nanos = nanos.rem_euclid(1_000_000_000);
    let secs = secs
        .filter(|s| (0..=MAX_SECONDS).contains(s))
        .and_then(|s| u64::try_from(s).ok())
        .ok_or_else(|| Error::Invalid("time out of the range 1970 to 9999".into()))?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Some((secs, nanos as u32)))
}

/// The RFC 3339 form: whole seconds for a `Time`, microseconds for a `MicroTime`.
pub(crate) fn format(secs: u64, nanos: u32, micro: bool) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let (y, mo, d) = civil_from_days(days.cast_signed());
    if micro {
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{:06}Z",
            nanos / 1000
        )
    } else {
        format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
    }
}

/// Year, month and day of a day count since 1970-01-01 (the proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (y, mo, d)
}

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(y: i64, mo: i64, d: i64) -> i64 {
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = if mo > 2 { mo - 3 } else { mo + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses an RFC 3339 time (`2006-01-02T15:04:05Z`, optional fraction, `Z` or `±hh:mm`).
pub(crate) fn parse(s: &str) -> Result<(i64, i32)> {
    let bad = || Error::Invalid(format!("{s:?} is not an RFC 3339 time"));
    let b = s.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Result<i64> {
        let part = b.get(range).ok_or_else(bad)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(part.iter().fold(0i64, |n, c| n * 10 + i64::from(c - b'0')))
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let mut pos = 19;
    let mut nanos = 0i64;
    if b[pos] == b'.' {
        let start = pos + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start || end - start > 9 {
            return Err(bad());
        }
        nanos = num(start..end)? * 10i64.pow(u32::try_from(9 - (end - start)).unwrap_or(0));
        pos = end;
    }
    let offset = match b.get(pos..) {
        Some(b"Z" | b"z") => 0,
        Some([sign @ (b'+' | b'-'), _, _, b':', _, _]) => {
            let off = num(pos + 1..pos + 3)? * 3600 + num(pos + 4..pos + 6)? * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return Err(bad()),
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset;
    #[allow(clippy::cast_possible_truncation)]
    Ok((secs, nanos as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_should_format_and_parse_known_instants() {
        assert_eq!(format(0, 0, false), "1970-01-01T00:00:00Z");
        assert_eq!(format(951_782_400, 0, false), "2000-02-29T00:00:00Z");
        assert_eq!(
            format(1_700_000_000, 5_000, true),
            "2023-11-14T22:13:20.000005Z"
        );
        assert_eq!(parse("2023-11-14T22:13:20Z"), Ok((1_700_000_000, 0)));
        assert_eq!(
            parse("2023-11-14T22:13:20.000005Z"),
            Ok((1_700_000_000, 5_000))
        );
        assert_eq!(parse("2023-11-14T23:13:20+01:00"), Ok((1_700_000_000, 0)));
        assert!(parse("2023-11-14").is_err());
        assert!(parse("2023-13-14T22:13:20Z").is_err());
        assert!(parse("2023-11-14T22:13:20.Z").is_err());
    }

    #[test]
    fn times_past_year_9999_should_be_refused() {
        let mut b = Vec::new();
        crate::wire::put_varint_field(1, u64::MAX, &mut b);
        assert!(read(&b).is_err());
        assert_eq!(read(&[]), Ok(None));
    }

    proptest::proptest! {
        #[test]
        fn formatting_and_parsing_should_round_trip(secs in 0u64..=253_402_300_799, micros in 0u32..1_000_000) {
            let text = format(secs, micros * 1000, true);
            proptest::prop_assert_eq!(parse(&text), Ok((secs.cast_signed(), (micros * 1000).cast_signed())));
        }
    }
}
