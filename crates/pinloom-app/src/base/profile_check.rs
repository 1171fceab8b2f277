//! The checks a model profile must pass that the store cannot make, since it knows neither
//! providers nor tokenizers: made when a profile is saved and again when one is planned for.

use pinloom_providers::ProviderId;
use pinloom_providers::catalog::TokenizerFamily;

use crate::error::ApiError;
use crate::json::ModelProfile;

/// The provider stored as `name`, or a refusal listing the names there are.
pub(crate) fn provider_named(name: &str) -> Result<ProviderId, ApiError> {
    ProviderId::from_name(name).ok_or_else(|| {
        let known: Vec<&str> = ProviderId::ALL.iter().map(|p| p.name()).collect();
        ApiError::invalid_input(format!(
            "unknown provider \"{name}\"; choose one of {}",
            known.join(", ")
        ))
    })
}

/// The checks the store cannot make, since it does not know providers and tokenizers.
pub(crate) fn check(profile: &ModelProfile) -> Result<(), ApiError> {
    let name = profile.name.trim();
    provider_named(&profile.provider)
        .map_err(|refusal| ApiError::invalid_input(format!("{name}: {}", refusal.message)))?;
    if profile.model_id.trim().is_empty() {
        return Err(ApiError::invalid_input(format!(
            "{name}: the model id is empty; enter it as the provider names it (for example \
             gpt-4o or llama3.2)"
        )));
    }
    if TokenizerFamily::from_name(&profile.tokenizer).is_none() {
        let known: Vec<&str> = TokenizerFamily::ALL.iter().map(|t| t.name()).collect();
        return Err(ApiError::invalid_input(format!(
            "{name}: unknown tokenizer \"{}\"; choose one of {}",
            profile.tokenizer,
            known.join(", ")
        )));
    }
    for (what, value) in
        [("context window", profile.context_window), ("reply reserve", profile.reserve)]
    {
        if value < 0 {
            return Err(ApiError::invalid_input(format!(
                "{name}: the {what} cannot be negative ({value}); enter a number of tokens"
            )));
        }
        if u32::try_from(value).is_err() {
            return Err(ApiError::invalid_input(format!(
                "{name}: the {what} of {value} tokens is beyond any model; enter the model's \
                 real number"
            )));
        }
    }
    if profile.context_window == 0 {
        return Err(ApiError::invalid_input(format!(
            "{name}: the context window must be at least 1 token"
        )));
    }
    if profile.reserve >= profile.context_window {
        return Err(ApiError::invalid_input(format!(
            "{name}: the reply reserve ({}) must be smaller than the context window ({}), \
             or nothing is left for the context",
            profile.reserve, profile.context_window
        )));
    }
    check_sampling_and_assembly(name, profile)?;
    if let Some(url) = &profile.base_url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(ApiError::invalid_input(format!(
            "{name}: the address \"{url}\" must start with http:// or https://"
        )));
    }
    Ok(())
}

/// The highest price per million tokens a profile may carry, in US dollars: far above any
/// model's, and low enough that no reply's cost overflows.
pub(crate) const MAX_PRICE: f64 = 10_000.0;

/// The names of the truncation strategies a profile may choose.
pub(crate) const TRUNCATION_STRATEGIES: [&str; 3] =
    ["truncateMiddle", "rollingWindow", "stopAtLimit"];

fn check_sampling_and_assembly(name: &str, profile: &ModelProfile) -> Result<(), ApiError> {
    let refuse = |message: String| Err(ApiError::invalid_input(format!("{name}: {message}")));
    let sampling = profile.sampling;
    if let Some(temperature) = sampling.temperature
        && !(0.0..=2.0).contains(&temperature)
    {
        return refuse(format!("a temperature of {temperature} is outside 0 to 2"));
    }
    if let Some(top_p) = sampling.top_p
        && !(0.0..=1.0).contains(&top_p)
    {
        return refuse(format!("a top-p of {top_p} is outside 0 to 1"));
    }
    if let Some(max) = sampling.max_output_tokens
        && (max < 1 || max >= profile.context_window)
    {
        return refuse(format!(
            "a reply of at most {max} tokens must be at least 1 and less than the window ({})",
            profile.context_window
        ));
    }
    let assembly = &profile.assembly;
    if let Some(truncation) = &assembly.truncation
        && !TRUNCATION_STRATEGIES.contains(&truncation.as_str())
    {
        return refuse(format!(
            "unknown truncation \"{truncation}\"; choose one of {}",
            TRUNCATION_STRATEGIES.join(", ")
        ));
    }
    if let Some(budgets) = &assembly.depth_budgets
        && (budgets.is_empty() || budgets.iter().any(|b| *b < 1 || *b >= profile.context_window))
    {
        return refuse(format!(
            "summary budgets must be one or more token counts from 1 to below the window ({}), \
             nearest thread first",
            profile.context_window
        ));
    }
    if let Some(recent) = assembly.minimum_recent_nodes
        && !(0..=10_000).contains(&recent)
    {
        return refuse(format!(
            "keeping the last {recent} messages is not possible; use 0 to 10,000"
        ));
    }
    if let Some(percent) = assembly.truncation_step_percent
        && !(0..=100).contains(&percent)
    {
        return refuse(format!(
            "a truncation step of {percent} % is not possible; use 0 (message by message) to 100"
        ));
    }
    if let Some(prices) = &profile.prices {
        let all = [
            Some(prices.input_per_million),
            Some(prices.output_per_million),
            prices.cache_read_per_million,
            prices.cache_write_per_million,
        ];
        if all.into_iter().flatten().any(|price| !(0.0..=MAX_PRICE).contains(&price)) {
            return refuse(format!(
                "prices are US dollars per million tokens, from 0 to {MAX_PRICE}; clear them for \
                 a model without a price"
            ));
        }
    }
    Ok(())
}
