//! Resource quantities (`100m`, `64Mi`, `1.5`, `2e3`) as the admission plugins compare, add and
//! print them: exact to the nano unit (kube-apiserver's `resource.Quantity` keeps at most nine
//! decimals and rounds what is finer up), printed in canonical form (`String()`): a binary
//! suffix (`Ki` ... `Ei`) for a quantity written with one that is a whole number of at least
//! 1024 units, else the largest decimal suffix (`n`, `u`, `m`, none, `k`, `M`, `G`, ...) that
//! keeps it whole.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// Nano units per unit.
const NANO: i128 = 1_000_000_000;

/// How a quantity was written, which decides how it is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `Ki`, `Mi`, ...
    BinarySi,
    /// `m`, `k`, `M`, ... or no suffix.
    DecimalSi,
    /// `e3`, `E-2`.
    DecimalExponent,
}

/// A quantity.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Quantity {
    /// The value in nano units.
    nanos: i128,
    format: Format,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl Quantity {
    /// Zero, printed as `0`.
    pub(crate) const ZERO: Quantity = Quantity {
        nanos: 0,
        format: Format::DecimalSi,
    };

    /// A whole number of units.
    pub(crate) fn from_units(units: i64) -> Self {
        Self {
            nanos: i128::from(units) * NANO,
            format: Format::DecimalSi,
        }
    }

    /// Parses a quantity as written in an object (a JSON string or number).
    pub(crate) fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::String(s) => Self::parse(s),
            Value::Number(n) => Self::parse(&n.to_string()),
            _ => None,
        }
    }

    /// Parses `text`; `None` if it is not a quantity.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let (negative, rest) = match text.as_bytes().first()? {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (number, suffix) = rest.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return None;
        }
        let (format, exp10, base2) = match suffix {
            "" => (Format::DecimalSi, 0, 0),
            "n" => (Format::DecimalSi, -9, 0),
            "u" => (Format::DecimalSi, -6, 0),
            "m" => (Format::DecimalSi, -3, 0),
            "k" => (Format::DecimalSi, 3, 0),
            "M" => (Format::DecimalSi, 6, 0),
            "G" => (Format::DecimalSi, 9, 0),
            "T" => (Format::DecimalSi, 12, 0),
            "P" => (Format::DecimalSi, 15, 0),
            "E" => (Format::DecimalSi, 18, 0),
            "Ki" => (Format::BinarySi, 0, 10),
            "Mi" => (Format::BinarySi, 0, 20),
            "Gi" => (Format::BinarySi, 0, 30),
            "Ti" => (Format::BinarySi, 0, 40),
            "Pi" => (Format::BinarySi, 0, 50),
            "Ei" => (Format::BinarySi, 0, 60),
            s if s.starts_with(['e', 'E']) => {
                let e: i32 = s[1..].parse().ok()?;
                (Format::DecimalExponent, e, 0)
            }
            _ => return None,
        };
        // digits * 10^(exp10 - fraction digits) * 2^base2, in nano units, rounded up.
        let digits: String = format!("{whole}{fraction}");
        let mantissa: i128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let scale = exp10 - fraction.len() as i32 + 9;
        let mut value = mantissa.checked_mul(1i128.checked_shl(base2)?)?;
        if scale >= 0 {
            value = value.checked_mul(10i128.checked_pow(scale as u32)?)?;
        } else {
            let d = 10i128.checked_pow((-scale) as u32)?;
            value = value / d + i128::from(value % d != 0);
        }
        Some(Self {
            nanos: if negative { -value } else { value },
            format,
        })
    }

    /// The sum; printed as `self` is, or as `other` when `self` is zero (as Go's
    /// `Quantity.Add`).
    pub(crate) fn add(self, other: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos + other.nanos,
            format: if self.nanos == 0 {
                other.format
            } else {
                self.format
            },
        }
    }

    /// Whether it is zero.
    pub(crate) fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// The value in milli units, rounded up (kube-apiserver's `MilliValue`).
    /// The value in units, as a float (for comparisons and rounding, not for display).
    pub(crate) fn as_f64(self) -> f64 {
        self.nanos as f64 / NANO as f64
    }

    pub(crate) fn milli_value(self) -> i128 {
        let d = NANO / 1000;
        self.nanos / d + i128::from(self.nanos % d > 0)
    }

    /// The canonical form as a JSON string.
    pub(crate) fn to_json(self) -> Value {
        Value::String(self.to_string())
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.nanos;
        if n == 0 {
            return f.write_str("0");
        }
        let mut format = self.format;
        if format == Format::BinarySi && (n.abs() < 1024 * NANO || n % NANO != 0) {
            format = Format::DecimalSi;
        }
        if format == Format::BinarySi {
            let mut units = n / NANO;
            let mut exp = 0;
            while exp < 6 && units % 1024 == 0 {
                units /= 1024;
                exp += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
            return write!(f, "{units}{suffix}");
        }
        // The largest exponent of ten, a multiple of three, that keeps the number whole.
        let mut mantissa = n;
        let mut exp = -9;
        while mantissa % 1000 == 0 && (format == Format::DecimalExponent || exp < 18) {
            mantissa /= 1000;
            exp += 3;
        }
        if format == Format::DecimalExponent {
            return if exp == 0 {
                write!(f, "{mantissa}")
            } else {
                write!(f, "{mantissa}e{exp}")
            };
        }
        let suffix = match exp {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            0 => "",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            _ => "E",
        };
        write!(f, "{mantissa}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> String {
        Quantity::parse(s).unwrap().to_string()
    }

    #[test]
    fn quantities_should_print_in_canonical_form() {
        for (written, printed) in [
            ("100m", "100m"),
            ("1", "1"),
            ("1000m", "1"),
            ("1500m", "1500m"),
            ("0.5", "500m"),
            ("1000", "1k"),
            ("64Mi", "64Mi"),
            ("1024Mi", "1Gi"),
            ("0.5Gi", "512Mi"),
            ("1536", "1536"),
            ("1.5Ki", "1536"),
            ("512", "512"),
            ("0", "0"),
            ("2e3", "2e3"),
            ("0.1m", "100u"),
            ("-1", "-1"),
        ] {
            assert_eq!(canonical(written), printed, "{written}");
        }
    }

    #[test]
    fn quantities_should_compare_by_value() {
        let q = |s| Quantity::parse(s).unwrap();
        assert!(q("1Gi") > q("512Mi"));
        assert_eq!(q("1"), q("1000m"));
        assert!(q("10m") < q("50m"));
        assert_eq!(q("200Mi").add(q("200Mi")).to_string(), "400Mi");
        assert_eq!(q("1n").milli_value(), 1);
        assert_eq!(Quantity::parse("1x"), None);
        assert_eq!(Quantity::parse(""), None);
        assert_eq!(Quantity::parse("."), None);
    }
}
