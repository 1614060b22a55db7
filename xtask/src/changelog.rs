//! Rewriting `CHANGELOG.md` for a release: the `Unreleased` section moves
//! under the new version with its date, and an empty one is filled from the
//! commit subjects since the last tag.

const UNRELEASED: &str = "## [Unreleased]";

/// Returns the changelog with the `Unreleased` section released as
/// `version` on `date` (`YYYY-MM-DD`); `subjects` fill it when it is empty.
pub fn release(
    text: &str,
    version: &str,
    date: &str,
    subjects: &[String],
) -> Result<String, String> {
    let start = text
        .find(UNRELEASED)
        .ok_or_else(|| format!("CHANGELOG.md has no `{UNRELEASED}` section"))?;
    let body_start = start + UNRELEASED.len();
    let body_end = text[body_start..]
        .find("\n## ")
        .map_or(text.len(), |i| body_start + i + 1);
    let body = text[body_start..body_end].trim();
    let body = if body.is_empty() {
        if subjects.is_empty() {
            return Err(
                "nothing to release: the Unreleased section is empty and there are no new commits"
                    .into(),
            );
        }
        subjects
            .iter()
            .map(|s| format!("- {s}"))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        body.to_string()
    };
    let rest = &text[body_end..];
    let sep = if rest.is_empty() { "" } else { "\n" };
    Ok(format!(
        "{}{UNRELEASED}\n\n## [{version}] - {date}\n\n{body}\n{sep}{rest}",
        &text[..start]
    ))
}

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// The proleptic Gregorian date of `days` since 1970-01-01.
fn civil_date(days: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm, for non-negative days.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "# Changelog\n\n## [Unreleased]\n\n- Added the queue.\n\n## [0.1.0] - 2026-01-01\n\n- First.\n";

    #[test]
    fn the_unreleased_section_moves_under_the_new_version() {
        let out = release(LOG, "0.2.0", "2026-11-22", &["ignored".into()]).unwrap();
        assert_eq!(
            out,
            "# Changelog\n\n## [Unreleased]\n\n## [0.2.0] - 2026-11-22\n\n- Added the queue.\n\n## [0.1.0] - 2026-01-01\n\n- First.\n"
        );
    }

    #[test]
    fn an_empty_unreleased_section_is_filled_from_commit_subjects() {
        let log = "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-01-01\n\n- First.\n";
        let out = release(
            log,
            "0.1.1",
            "2026-11-22",
            &["Fix the queue".into(), "Add docs".into()],
        )
        .unwrap();
        assert!(out.contains("## [Unreleased]\n\n## [0.1.1] - 2026-11-22\n\n- Fix the queue\n- Add docs\n\n## [0.1.0]"));
    }

    #[test]
    fn a_last_section_at_the_end_of_the_file_is_released_too() {
        let out = release("# C\n\n## [Unreleased]\n- x\n", "1.0.0", "2026-11-22", &[]).unwrap();
        assert_eq!(
            out,
            "# C\n\n## [Unreleased]\n\n## [1.0.0] - 2026-11-22\n\n- x\n"
        );
    }

    #[test]
    fn nothing_to_release_and_no_section_are_errors() {
        assert!(release("# C\n", "1.0.0", "2026-11-22", &[]).is_err());
        assert!(release("# C\n\n## [Unreleased]\n", "1.0.0", "2026-11-22", &[]).is_err());
    }

    #[test]
    fn civil_dates_are_computed_from_days_since_the_epoch() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_414), "2025-11-22");
    }
}
