//! When to send a request again, and after how long.
//!
//! Only failures before the reply starts are retried, and only those [`ProviderError::retry`]
//! allows: rate limits (429), overload (529), server errors (5xx) and unreachable servers. Never
//! a refused key (401), spent credit (402), an exhausted quota or a malformed request (400).
//! A provider's `Retry-After` (or Gemini's `RetryInfo.retryDelay`) is honoured; otherwise the
//! wait doubles from `base` up to `cap`, with jitter so that many clients do not retry in step.

use std::future::Future;
use std::time::{Duration, SystemTime};

use crate::error::ProviderError;

/// How many times, and how long between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first try (so `max_retries + 1` tries in all).
    pub max_retries: u32,
    /// The first wait, before jitter.
    pub base: Duration,
    /// The longest wait between tries, before jitter.
    pub cap: Duration,
    /// A provider asking to wait longer than this is not waited for: the error is shown with its
    /// wait instead ("rate limited for the next 3600 s"), and the person decides.
    pub longest_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Three retries, 1 s doubling to 20 s, waiting at most a minute when asked (OpenAI's SDKs
    /// retry twice by default; a reply the person is waiting for deserves one more).
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(20),
            longest_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn never() -> RetryPolicy {
        RetryPolicy { max_retries: 0, ..RetryPolicy::default() }
    }

    /// The wait before retry number `retry` (1 for the first), or `None` when the failure is not
    /// worth retrying or the tries are used up. `jitter` is a number in [0, 1): the wait is
    /// between half and all of the backoff step ("equal jitter"); a provider's own wait is kept
    /// and only lengthened, by up to a tenth, never shortened.
    pub fn wait(&self, retry: u32, error: &ProviderError, jitter: f64) -> Option<Duration> {
        if retry > self.max_retries {
            return None;
        }
        let asked = error.retry()?;
        let jitter = jitter.clamp(0.0, 1.0);
        match asked {
            Some(asked) if asked > self.longest_retry_after => None,
            Some(asked) => Some(asked.mul_f64(1.0 + jitter / 10.0)),
            None => {
                let step = self
                    .base
                    .saturating_mul(2_u32.saturating_pow(retry.saturating_sub(1)))
                    .min(self.cap);
                Some(step.mul_f64(0.5 + jitter / 2.0))
            }
        }
    }
}

/// Reads a `Retry-After` header: whole seconds, or an HTTP date (RFC 9110 §10.2.3), measured
/// from `now`. A date in the past means no wait.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Runs `attempt` until it succeeds, fails for good, or the policy's tries are used up; between
/// tries it tells `waiting` (try number, wait, reason) and sleeps on tokio's clock, so tests run
/// it on a paused clock without real waits.
pub async fn with_retries<T, Attempt, Fut>(
    policy: RetryPolicy,
    mut attempt: Attempt,
    mut waiting: impl FnMut(u32, Duration, &ProviderError),
) -> Result<T, ProviderError>
where
    Attempt: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let mut try_number = 1;
    loop {
        match attempt(try_number).await {
            Ok(value) => return Ok(value),
            Err(error) => {
                let Some(wait) = policy.wait(try_number, &error, fastrand::f64()) else {
                    return Err(error);
                };
                try_number += 1;
                waiting(try_number, wait, &error);
                tokio::time::sleep(wait).await;
            }
        }
    }
}
