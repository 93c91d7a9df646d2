//! Builds llama.cpp's sampler chain from [`SamplingParams`].

use llama_cpp_2::sampling::LlamaSampler;

use crate::SamplingParams;

/// The chain llama.cpp's own tools use: penalties, top-k, top-p, min-p, temperature,
/// then a seeded draw; greedy when the temperature is 0.
pub(crate) fn build_sampler(params: &SamplingParams, n_vocab: i32) -> LlamaSampler {
    let mut chain = Vec::new();
    if params.repeat_penalty != 1.0 && params.repeat_last_n != 0 {
        chain.push(LlamaSampler::penalties(
            n_vocab,
            params.repeat_last_n,
            params.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if params.temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
        return LlamaSampler::chain_simple(chain);
    }
    if params.top_k > 0 {
        chain.push(LlamaSampler::top_k(params.top_k));
    }
    if params.top_p < 1.0 {
        chain.push(LlamaSampler::top_p(params.top_p, 1));
    }
    if params.min_p > 0.0 {
        chain.push(LlamaSampler::min_p(params.min_p, 1));
    }
    chain.push(LlamaSampler::temp(params.temperature));
    chain.push(LlamaSampler::dist(params.seed));
    LlamaSampler::chain_simple(chain)
}
