//! What a request cost, from the provider's counts and the prices the person entered: one rule
//! for a reply's receipt and a request made in the background.

use crate::json::{Cost, Prices};

/// The cost of a request whose prompt the provider counted as `counted` tokens (cache reads and
/// writes at their own prices when the profile has them) and whose reply as `output`.
pub(crate) fn cost(
    prices: Prices,
    counted: u64,
    usage: &pinloom_providers::Usage,
    output: Option<u64>,
) -> Option<Cost> {
    let read = usage.cached_input_tokens.unwrap_or(0);
    let written = usage.cache_write_input_tokens.unwrap_or(0);
    let plain = counted.saturating_sub(read + written);
    let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
    let input = per(plain, prices.input_per_million)
        + per(read, prices.cache_read_per_million.unwrap_or(prices.input_per_million))
        + per(written, prices.cache_write_per_million.unwrap_or(prices.input_per_million));
    let output = per(output.unwrap_or(0), prices.output_per_million);
    let total = input + output;
    // Prices are checked when saved; a cost that is not a number still never reaches a receipt.
    total.is_finite().then_some(Cost { input, output, total })
}
