//! Medians and percentiles of measured durations.

use std::time::Duration;

pub struct Summary {
    pub median: Duration,
    pub p90: Duration,
    pub p99: Duration,
}

pub fn summarize(mut samples: Vec<Duration>) -> Summary {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    Summary { median: at(0.5), p90: at(0.9), p99: at(0.99) }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
