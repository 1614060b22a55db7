//! Health and readiness checks (controller-runtime `pkg/healthz`).
//!
//! A [`Checks`] set answers `/healthz` or `/readyz` the way controller-runtime
//! and the Kubernetes API server do:
//!
//! - `GET /readyz` runs every check; `200 ok` when all pass, otherwise `500`
//!   with one line per check (`[+]name ok` / `[-]name failed: reason
//!   withheld`) and `readyz check failed`;
//! - `?verbose` lists the checks on success too, ending in `readyz check
//!   passed`;
//! - `?exclude=name` (repeatable) skips a check;
//! - `GET /readyz/<name>` runs one check: `200 ok`, `500 internal server
//!   error: <reason>`, or `404` for an unknown name.

use std::collections::BTreeMap;
use std::sync::Arc;

use http::StatusCode;
use parking_lot::RwLock;

use crate::BoxError;

/// One named health or readiness check.
///
/// Implemented for every `Fn() -> Result<(), E>` whose error converts into
/// [`BoxError`] (a `String`, a `&str`, any error type).
pub trait Checker: Send + Sync + 'static {
    /// `Ok(())` when healthy; the error says why not (shown only for a
    /// single-check request such as `/readyz/<name>`).
    fn check(&self) -> Result<(), BoxError>;
}

impl<F, E> Checker for F
where
    F: Fn() -> Result<(), E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    fn check(&self) -> Result<(), BoxError> {
        self().map_err(Into::into)
    }
}

/// The check that always passes (controller-runtime `healthz.Ping`).
pub fn ping() -> Result<(), BoxError> {
    Ok(())
}

/// What an endpoint answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResponse {
    /// The HTTP status.
    pub status: StatusCode,
    /// The plain-text body.
    pub body: String,
}

/// A named set of checks behind one endpoint (`healthz` or `readyz`).
///
/// Cheap to clone; clones share the set, so checks added after the server
/// started are served at once.
#[derive(Clone)]
pub struct Checks {
    endpoint: &'static str,
    // Held only to clone the set out or to insert, never across an `.await`.
    checks: Arc<RwLock<BTreeMap<String, Arc<dyn Checker>>>>,
}

impl std::fmt::Debug for Checks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checks")
            .field("endpoint", &self.endpoint)
            .field("checks", &self.checks.read().keys().collect::<Vec<_>>())
            .finish()
    }
}

struct Status {
    name: String,
    healthy: bool,
    excluded: bool,
}

impl Checks {
    /// An empty set serving `/<endpoint>` (`"healthz"` or `"readyz"`).
    pub fn new(endpoint: &'static str) -> Self {
        Self {
            endpoint,
            checks: Arc::default(),
        }
    }

    /// The endpoint name.
    pub fn endpoint(&self) -> &'static str {
        self.endpoint
    }

    /// Adds (or replaces) the check `name`.
    pub fn add(&self, name: impl Into<String>, check: impl Checker) {
        self.checks.write().insert(name.into(), Arc::new(check));
    }

    /// The names of the checks, sorted.
    pub fn names(&self) -> Vec<String> {
        self.checks.read().keys().cloned().collect()
    }

    fn snapshot(&self) -> Vec<(String, Arc<dyn Checker>)> {
        self.checks
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Answers a request for `sub_path` (empty for the aggregate, or a check
    /// name) with the raw `query` string (without `?`).
    pub fn handle(&self, sub_path: &str, query: Option<&str>) -> CheckResponse {
        let sub_path = sub_path.trim_matches('/');
        if sub_path.is_empty() {
            self.aggregate(query)
        } else {
            self.single(sub_path)
        }
    }

    fn single(&self, name: &str) -> CheckResponse {
        let check = self.checks.read().get(name).cloned();
        match check {
            None => CheckResponse {
                status: StatusCode::NOT_FOUND,
                body: "404 page not found\n".into(),
            },
            Some(check) => match run(check.as_ref()) {
                Ok(()) => CheckResponse {
                    status: StatusCode::OK,
                    body: "ok".into(),
                },
                Err(e) => CheckResponse {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    body: format!("internal server error: {e}\n"),
                },
            },
        }
    }

    fn aggregate(&self, query: Option<&str>) -> CheckResponse {
        let (verbose, mut excluded) = parse_query(query);
        let checks = self.snapshot();
        let mut statuses = Vec::with_capacity(checks.len().max(1));
        let mut failed = false;
        for (name, check) in &checks {
            if excluded.remove(name) {
                statuses.push(Status {
                    name: name.clone(),
                    healthy: true,
                    excluded: true,
                });
                continue;
            }
            let healthy = match run(check.as_ref()) {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(endpoint = self.endpoint, checker = %name, error = %e, "check failed");
                    false
                }
            };
            failed |= !healthy;
            statuses.push(Status {
                name: name.clone(),
                healthy,
                excluded: false,
            });
        }
        if checks.is_empty() {
            statuses.push(Status {
                name: "ping".into(),
                healthy: true,
                excluded: false,
            });
        }
        for name in excluded {
            tracing::debug!(endpoint = self.endpoint, checker = %name, "cannot exclude check: no such check");
        }
        let endpoint = self.endpoint;
        if failed {
            // Always verbose on failure.
            return CheckResponse {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                body: format!("{}{endpoint} check failed\n", format_statuses(&statuses)),
            };
        }
        let body = if verbose {
            format!("{}{endpoint} check passed\n", format_statuses(&statuses))
        } else {
            "ok".into()
        };
        CheckResponse {
            status: StatusCode::OK,
            body,
        }
    }
}

/// The handler of the probe server: `/healthz[/<name>]` and `/readyz[/<name>]`.
pub(crate) fn probes_handler(healthz: Checks, readyz: Checks) -> crate::server::Handler {
    Arc::new(move |request: &http::Request<_>| {
        let path = request.uri().path();
        let query = request.uri().query();
        for checks in [&healthz, &readyz] {
            let prefix = checks.endpoint();
            if let Some(rest) = path.strip_prefix('/').and_then(|p| p.strip_prefix(prefix))
                && (rest.is_empty() || rest.starts_with('/'))
            {
                let answer = checks.handle(rest, query);
                return crate::server::text(answer.status, answer.body);
            }
        }
        crate::server::not_found()
    })
}

/// Runs a check, turning a panic into a failure.
fn run(check: &dyn Checker) -> Result<(), BoxError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check.check())) {
        Ok(r) => r,
        Err(_) => Err("check panicked".into()),
    }
}

fn format_statuses(statuses: &[Status]) -> String {
    let mut out = String::new();
    for s in statuses {
        let line = match (s.healthy, s.excluded) {
            (true, true) => format!("[+]{} excluded: ok\n", s.name),
            (true, false) => format!("[+]{} ok\n", s.name),
            (false, _) => format!("[-]{} failed: reason withheld\n", s.name),
        };
        out.push_str(&line);
    }
    out
}

/// `verbose` present (any value), and the set of `exclude` values.
fn parse_query(query: Option<&str>) -> (bool, std::collections::BTreeSet<String>) {
    let mut verbose = false;
    let mut excluded = std::collections::BTreeSet::new();
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "verbose" => verbose = true,
            "exclude" if !value.is_empty() => {
                excluded.insert(percent_decode(value));
            }
            _ => {}
        }
    }
    (verbose, excluded)
}

/// Decodes `%XX` escapes and `+` (check names are plain ASCII in practice).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn checks() -> (Checks, Arc<AtomicBool>) {
        let ready = Arc::new(AtomicBool::new(false));
        let c = Checks::new("readyz");
        c.add("ping", ping);
        let flag = ready.clone();
        c.add("informer-sync", move || {
            if flag.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("not synced")
            }
        });
        (c, ready)
    }

    #[test]
    fn an_empty_set_should_answer_ok() {
        let r = Checks::new("healthz").handle("", None);
        assert_eq!((r.status, r.body.as_str()), (StatusCode::OK, "ok"));
        let r = Checks::new("healthz").handle("", Some("verbose"));
        assert_eq!(r.body, "[+]ping ok\nhealthz check passed\n");
    }

    #[test]
    fn a_failing_check_should_fail_the_aggregate_verbosely_without_its_reason() {
        let (c, _) = checks();
        let r = c.handle("", None);
        assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            r.body,
            "[-]informer-sync failed: reason withheld\n[+]ping ok\nreadyz check failed\n"
        );
    }

    #[test]
    fn passing_checks_should_answer_ok_or_list_them_when_verbose() {
        let (c, ready) = checks();
        ready.store(true, Ordering::SeqCst);
        assert_eq!(c.handle("", None).body, "ok");
        let r = c.handle("", Some("verbose=1"));
        assert_eq!(
            (r.status, r.body.as_str()),
            (
                StatusCode::OK,
                "[+]informer-sync ok\n[+]ping ok\nreadyz check passed\n"
            )
        );
    }

    #[test]
    fn an_excluded_check_should_not_run() {
        let (c, _) = checks();
        let r = c.handle("", Some("exclude=informer-sync&verbose"));
        assert_eq!(r.status, StatusCode::OK);
        assert_eq!(
            r.body,
            "[+]informer-sync excluded: ok\n[+]ping ok\nreadyz check passed\n"
        );
    }

    #[test]
    fn a_single_check_should_show_its_reason_and_unknown_names_should_be_404() {
        let (c, ready) = checks();
        let r = c.handle("/informer-sync", None);
        assert_eq!(
            (r.status, r.body.as_str()),
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal server error: not synced\n"
            )
        );
        ready.store(true, Ordering::SeqCst);
        assert_eq!(c.handle("informer-sync", None).status, StatusCode::OK);
        assert_eq!(c.handle("nope", None).status, StatusCode::NOT_FOUND);
    }

    #[test]
    fn a_panicking_check_should_fail_not_crash() {
        let c = Checks::new("healthz");
        c.add("boom", || -> Result<(), String> { panic!("boom") });
        assert_eq!(c.handle("", None).status, StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn query_values_should_be_percent_decoded() {
        assert_eq!(percent_decode("a%2Db+c%"), "a-b c%");
    }
}
