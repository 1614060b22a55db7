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

/// The RFC 3339 form: whole seconds for a `Time`, microseconds for a `MicroTime` (both
/// truncated, as Go's `RFC3339` and `RFC3339Micro` layouts write them).
pub(crate) fn format(secs: u64, nanos: u32, micro: bool) -> String {
    let (layout, nanos) = if micro {
        ("%Y-%m-%dT%H:%M:%S.%6fZ", nanos / 1000 * 1000)
    } else {
        ("%Y-%m-%dT%H:%M:%SZ", 0)
    };
    // `read` keeps seconds within 1970..=9999, where a timestamp always exists.
    jiff::Timestamp::new(secs.cast_signed(), nanos.cast_signed())
        .map(|t| t.strftime(layout).to_string())
        .unwrap_or_default()
}

/// Parses an RFC 3339 time (`2006-01-02T15:04:05Z`, optional fraction, `Z` or `±hh:mm`) into
/// seconds and nanoseconds since the epoch.
pub(crate) fn parse(s: &str) -> Result<(i64, i32)> {
    let t: jiff::Timestamp = s
        .parse()
        .map_err(|_| Error::Invalid(format!("{s:?} is not an RFC 3339 time")))?;
    Ok((t.as_second(), t.subsec_nanosecond()))
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
