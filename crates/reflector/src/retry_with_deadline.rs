//! How long a reflector keeps re-opening a watch that ends with an internal
//! error before it relists (client-go's `retry_with_deadline.go`, behind
//! [`Reflector::max_internal_error_retry_duration`](crate::Reflector::max_internal_error_retry_duration)).

use std::time::Duration;

use tokio::time::Instant;

use crate::error::Error;

/// Tracks a run of internal errors: a watch that ends with one is re-opened
/// (without a relist) while the run is no longer than `max_retry_duration`.
/// A run ends when no internal error came for `min_reset_period`.
#[derive(Debug)]
pub(crate) struct RetryWithDeadline {
    first_error: Option<Instant>,
    last_error: Option<Instant>,
    max_retry_duration: Duration,
    min_reset_period: Duration,
}

impl RetryWithDeadline {
    pub(crate) fn new(max_retry_duration: Duration, min_reset_period: Duration) -> Self {
        Self {
            first_error: None,
            last_error: None,
            max_retry_duration,
            min_reset_period,
        }
    }

    fn reset(&mut self) {
        self.first_error = None;
        self.last_error = None;
    }

    /// Notes how a watch ended.
    pub(crate) fn after(&mut self, error: Option<&Error>) {
        if !error.is_some_and(Error::is_internal_error) {
            return;
        }
        let now = Instant::now();
        if self
            .last_error
            .is_none_or(|last| now.saturating_duration_since(last) >= self.min_reset_period)
        {
            self.reset();
        }
        self.first_error.get_or_insert(now);
        self.last_error = Some(now);
    }

    /// Whether the internal error just noted may be retried.
    pub(crate) fn should_retry(&mut self) -> bool {
        if self.max_retry_duration.is_zero() {
            return false;
        }
        if let Some(first) = self.first_error
            && Instant::now().saturating_duration_since(first) <= self.max_retry_duration
        {
            return true;
        }
        self.reset();
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn internal() -> Error {
        Error::from_status(Status::failure("boom", "InternalError").with_code(500))
    }

    #[tokio::test(start_paused = true)]
    async fn retry_should_stop_once_the_run_of_internal_errors_outlasts_the_deadline() {
        let mut retry = RetryWithDeadline::new(Duration::from_secs(10), Duration::from_secs(60));
        retry.after(Some(&internal()));
        assert!(retry.should_retry());
        tokio::time::advance(Duration::from_secs(10)).await;
        retry.after(Some(&internal()));
        assert!(retry.should_retry(), "10 s into the run is still within it");
        tokio::time::advance(Duration::from_secs(1)).await;
        retry.after(Some(&internal()));
        assert!(!retry.should_retry());
    }

    #[tokio::test(start_paused = true)]
    async fn retry_should_start_a_new_run_after_a_quiet_minute_and_never_retry_other_errors() {
        let mut retry = RetryWithDeadline::new(Duration::from_secs(10), Duration::from_secs(60));
        retry.after(Some(&internal()));
        tokio::time::advance(Duration::from_secs(61)).await;
        retry.after(Some(&internal()));
        assert!(retry.should_retry(), "a new run started");
        let mut off = RetryWithDeadline::new(Duration::ZERO, Duration::from_secs(60));
        off.after(Some(&internal()));
        assert!(!off.should_retry(), "zero disables the retries");
        let mut other = RetryWithDeadline::new(Duration::from_secs(10), Duration::from_secs(60));
        other.after(Some(&Error::VeryShortWatch));
        assert!(!other.should_retry());
    }
}
