//! The reflector's exponential backoff (client-go's
//! `wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)`).

use std::time::Duration;

use tokio::time::Instant;

/// Parameters of the reflector's backoff between failed attempts.
///
/// Each delay is `d × (1 + jitter × r)` with `r` uniform in `[0, 1)`, where
/// `d` starts at `initial`, doubles (`factor`) after each use and stops
/// growing at `max` — client-go's `ExponentialBackoffManager`, where the cap
/// applies before the jitter. When `reset_after` has passed since the
/// previous delay was handed out, `d` starts over at `initial`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct BackoffConfig {
    /// The first delay (client-go: 800 ms).
    pub initial: Duration,
    /// The largest un-jittered delay (client-go: 30 s).
    pub max: Duration,
    /// How long without a backoff resets it (client-go: 2 min).
    pub reset_after: Duration,
    /// Growth factor (client-go: 2.0).
    pub factor: f64,
    /// Jitter factor (client-go: 1.0, so a delay lies in `[d, 2d)`).
    pub jitter: f64,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            reset_after: Duration::from_secs(120),
            factor: 2.0,
            jitter: 1.0,
        }
    }
}

impl BackoffConfig {
    /// A configuration with the given initial and maximum delays and
    /// client-go's other defaults.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self {
            initial,
            max,
            ..Self::default()
        }
    }

    /// Sets the reset period.
    #[must_use]
    pub fn reset_after(mut self, reset_after: Duration) -> Self {
        self.reset_after = reset_after;
        self
    }

    /// Sets the jitter factor (0 disables jitter).
    #[must_use]
    pub fn jitter(mut self, jitter: f64) -> Self {
        self.jitter = jitter.max(0.0);
        self
    }
}

/// The state of one reflector's backoff.
#[derive(Debug)]
pub(crate) struct Backoff {
    config: BackoffConfig,
    next: Duration,
    last: Option<Instant>,
}

impl Backoff {
    pub(crate) fn new(config: BackoffConfig) -> Self {
        Self {
            next: config.initial,
            config,
            last: None,
        }
    }

    /// The next delay, stepping the backoff.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if let Some(last) = self.last
            && now.saturating_duration_since(last) > self.config.reset_after
        {
            self.next = self.config.initial;
        }
        self.last = Some(now);
        let base = self.next.min(self.config.max);
        let grown = base.mul_f64(self.config.factor.max(1.0));
        self.next = grown.min(self.config.max);
        if self.config.jitter > 0.0 {
            let r: f64 = rand::random();
            base.mul_f64(1.0 + self.config.jitter * r)
        } else {
            base
        }
    }

    /// The base delay the next call would start from (for tests and logs).
    #[cfg(test)]
    pub(crate) fn peek_base(&self) -> Duration {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn backoff_should_double_from_800ms_up_to_30s_with_jitter_within_one_step() {
        let mut backoff = Backoff::new(BackoffConfig::default());
        let mut expected = Duration::from_millis(800);
        for _ in 0..10 {
            let delay = backoff.next_delay();
            assert!(
                delay >= expected && delay < expected * 2,
                "delay {delay:?} not in [{expected:?}, {:?})",
                expected * 2
            );
            expected = (expected * 2).min(Duration::from_secs(30));
        }
        assert_eq!(backoff.peek_base(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_should_reset_after_two_minutes_without_a_backoff() {
        let mut backoff = Backoff::new(BackoffConfig::default().jitter(0.0));
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
        assert_eq!(backoff.next_delay(), Duration::from_millis(1600));
        tokio::time::advance(Duration::from_secs(119)).await;
        assert_eq!(backoff.next_delay(), Duration::from_millis(3200));
        tokio::time::advance(Duration::from_secs(121)).await;
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
    }
}
