//! The memory planner: what K sessions of N tokens of a model need, whether that fits
//! the memory free on this machine, how many sessions do, and how many layers go to a
//! GPU. Pure: the caller reads free memory (RAM here, device memory in rein-llama).

use crate::memory::KvCacheType;
use crate::GgufInfo;

/// The share of free memory a plan may use; the rest is left for everything else.
const USABLE_PERCENT: u64 = 90;

/// Sessions the planner counts up to when it says how many would fit.
pub const MAX_PLANNED_SESSIONS: u32 = 256;

/// Bytes of the process outside llama.cpp's buffers and vocabulary: code, allocator,
/// threads, tokio. With [`VOCAB_ENTRY_BYTES`], fitted to peak resident memory of three
/// models with vocabularies of 49k and 152k entries (docs/BENCHMARKS.md).
const RUNTIME_BYTES: u64 = 14 << 20;

/// Bytes per vocabulary entry: llama.cpp's token text, scores, lookup maps and BPE
/// merges, and rein's token pieces.
const VOCAB_ENTRY_BYTES: u64 = 512;

/// What the planner needs to know of the machine: free RAM, each GPU's memory, and
/// the tensor types the CPU backend keeps a second, repacked copy of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    /// Free RAM in bytes (`None` where it cannot be read).
    pub ram: Option<u64>,
    /// The GPUs llama.cpp can use.
    pub gpus: Vec<GpuMemory>,
    /// ggml type names repacked for this CPU (see [`cpu_repacked_types`]).
    pub repacked_types: Vec<String>,
}

/// The weight types llama.cpp's CPU backend repacks into an interleaved copy on this
/// CPU (x86-64 with AVX2: Q4_0, Q4_K, IQ4_NL, and Q2_K with AVX-512; ARM with dot
/// products: also Q5_K, Q6_K and Q8_0). The mapped file stays resident as well.
pub fn cpu_repacked_types() -> Vec<String> {
    let mut types: Vec<&str> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            types.extend(["Q4_0", "Q4_K", "IQ4_NL"]);
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            types.push("Q2_K");
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if std::arch::is_aarch64_feature_detected!("dotprod") {
            types.extend(["Q4_0", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "Q8_0"]);
        }
    }
    types.into_iter().map(String::from).collect()
}

/// One GPU's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuMemory {
    /// The device's name as llama.cpp reports it.
    pub name: String,
    /// Free device memory in bytes.
    pub free: u64,
    /// Total device memory in bytes.
    pub total: u64,
}

/// How many layers to offload to GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuLayers {
    /// As many as fit (0 without a GPU).
    Auto,
    /// Exactly this many (capped at the model's layers + the output head).
    Fixed(u32),
}

impl std::str::FromStr for GpuLayers {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("auto") {
            return Ok(GpuLayers::Auto);
        }
        s.parse().map(GpuLayers::Fixed).map_err(|_| {
            format!("`{s}` is not a layer count: use a number or `auto` (as many as fit)")
        })
    }
}

impl std::fmt::Display for GpuLayers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuLayers::Auto => f.write_str("auto"),
            GpuLayers::Fixed(n) => write!(f, "{n}"),
        }
    }
}

/// What is asked of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanRequest {
    /// Tokens of context each session may hold.
    pub ctx_per_session: u64,
    /// Sessions that run at once.
    pub sessions: u32,
    /// The KV cache's element type.
    pub kv_type: KvCacheType,
    /// Tokens per decode call (llama.cpp's micro-batch).
    pub n_batch: u32,
    /// Layers on GPUs.
    pub gpu_layers: GpuLayers,
}

/// Tokens per `decode` call unless set otherwise (the engine's default too).
pub const DEFAULT_N_BATCH: u32 = 512;

impl PlanRequest {
    /// `sessions` sessions of `ctx_per_session` tokens, f16 KV, batches of
    /// [`DEFAULT_N_BATCH`], CPU.
    pub fn new(ctx_per_session: u64, sessions: u32) -> Self {
        Self {
            ctx_per_session,
            sessions,
            kv_type: KvCacheType::F16,
            n_batch: DEFAULT_N_BATCH,
            gpu_layers: GpuLayers::Fixed(0),
        }
    }
}

/// What the planner is asked for `sessions` sessions of `ctx_per_session` tokens with
/// `kv_type` and `gpu_layers`, at the engine's default batch size.
pub fn plan_request(
    ctx_per_session: u64,
    sessions: u32,
    kv_type: KvCacheType,
    gpu_layers: GpuLayers,
) -> PlanRequest {
    PlanRequest {
        kv_type,
        gpu_layers,
        ..PlanRequest::new(ctx_per_session, sessions)
    }
}

/// Where the bytes go on one kind of memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Placement {
    /// Weight tensors (on the CPU: the mapped file and the repacked copies).
    pub weights: u64,
    /// KV cache per session of `ctx_per_session` tokens.
    pub kv_per_session: u64,
    /// llama.cpp's compute and output buffers (as much as a full batch touches).
    pub compute: u64,
    /// The rest of the process (RAM only).
    pub runtime: u64,
}

impl Placement {
    /// KV cache bytes for `sessions` sessions.
    pub fn kv(&self, sessions: u32) -> u64 {
        self.kv_per_session * u64::from(sessions)
    }

    /// Total bytes for `sessions` sessions.
    pub fn total(&self, sessions: u32) -> u64 {
        self.weights + self.kv(sessions) + self.compute + self.runtime
    }
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPlan {
    /// What was asked.
    pub request: PlanRequest,
    /// Layers offloaded to GPUs.
    pub gpu_layers: u32,
    /// Layers that can be offloaded (transformer layers + the output head).
    pub offloadable_layers: u32,
    /// What stays in RAM.
    pub ram: Placement,
    /// What goes to GPUs.
    pub gpu: Placement,
    /// Free RAM (`None` = unknown: the plan then assumes it fits).
    pub ram_free: Option<u64>,
    /// Free GPU memory, all GPUs together (0 without one).
    pub gpu_free: u64,
    /// How many sessions of `ctx_per_session` tokens fit (at most 256).
    pub sessions_fit: u32,
}

impl MemoryPlan {
    /// Whether the requested sessions fit.
    pub fn fits(&self) -> bool {
        self.sessions_fit >= self.request.sessions
    }

    /// The estimate for the requested sessions: RAM plus GPU bytes.
    pub fn total_bytes(&self) -> u64 {
        self.ram.total(self.request.sessions) + self.gpu.total(self.request.sessions)
    }

    /// Why the request does not fit, with the numbers; `None` when it fits.
    pub fn refusal(&self) -> Option<String> {
        if self.fits() {
            return None;
        }
        let r = &self.request;
        let mut text = format!(
            "{} sessions of {} tokens need about {} of RAM (weights {} + KV cache {} + buffers {})",
            r.sessions,
            r.ctx_per_session,
            mib(self.ram.total(r.sessions)),
            mib(self.ram.weights),
            mib(self.ram.kv(r.sessions)),
            mib(self.ram.compute + self.ram.runtime),
        );
        if self.gpu_layers > 0 {
            text.push_str(&format!(
                " and {} on the GPU ({} layers)",
                mib(self.gpu.total(r.sessions)),
                self.gpu_layers
            ));
        }
        match self.ram_free {
            Some(free) => text.push_str(&format!(
                ", but {} of RAM is free ({}% of it usable)",
                mib(free),
                USABLE_PERCENT
            )),
            None => text.push_str(", which is more than is free"),
        }
        if self.sessions_fit == 0 {
            text.push_str("; not even one session fits: lower the context or use a smaller KV type (q8_0, q4_0)");
        } else {
            text.push_str(&format!("; {} would fit", self.sessions_fit));
        }
        Some(text)
    }
}

/// Plans `request` for the model described by `info` within `free`.
pub fn plan_memory(info: &GgufInfo, request: PlanRequest, free: &Machine) -> MemoryPlan {
    let layers = u32::try_from(info.block_count).unwrap_or(u32::MAX);
    let offloadable = layers.saturating_add(1);
    let gpu_free: u64 = free.gpus.iter().map(|g| g.free).sum();
    let usable = |bytes: u64| bytes / 100 * USABLE_PERCENT;
    let gpu_layers = match request.gpu_layers {
        _ if free.gpus.is_empty() => 0,
        GpuLayers::Fixed(n) => n.min(offloadable),
        GpuLayers::Auto => (0..=offloadable)
            .rev()
            .find(|&n| {
                split(info, &request, n).1.total(request.sessions.max(1)) <= usable(gpu_free)
            })
            .unwrap_or(0),
    };
    let (ram, gpu) = split(info, &request, gpu_layers);
    let repacked: u64 = free
        .repacked_types
        .iter()
        .filter_map(|t| info.matrix_bytes_by_type.get(t))
        .sum();
    let ram_share = ram.weights as f64 / info.weights_bytes.max(1) as f64;
    let ram = Placement {
        weights: ram.weights + (repacked as f64 * ram_share) as u64,
        ..ram
    };
    let fit = |sessions: u32| {
        let ram_ok = free.ram.is_none_or(|f| ram.total(sessions) <= usable(f));
        let gpu_ok = gpu_layers == 0 || gpu.total(sessions) <= usable(gpu_free);
        ram_ok && gpu_ok
    };
    let sessions_fit = (1..=MAX_PLANNED_SESSIONS)
        .take_while(|&s| fit(s))
        .last()
        .unwrap_or(0);
    MemoryPlan {
        request,
        gpu_layers,
        offloadable_layers: offloadable,
        ram,
        gpu,
        ram_free: free.ram,
        gpu_free,
        sessions_fit,
    }
}

/// The plan for as many of the requested sessions as fit (the rest wait in the
/// engine's queue); `Err` with [`MemoryPlan::refusal`]'s text when not even one fits.
pub fn plan_admitted(
    info: &GgufInfo,
    mut request: PlanRequest,
    machine: &Machine,
) -> Result<MemoryPlan, String> {
    let plan = plan_memory(info, request, machine);
    match plan.refusal() {
        None => Ok(plan),
        Some(reason) if plan.sessions_fit == 0 => Err(reason),
        Some(_) => {
            request.sessions = plan.sessions_fit;
            Ok(plan_memory(info, request, machine))
        }
    }
}

/// RAM and GPU placements with the last `gpu_layers` layers (and, at the full count,
/// the output head) offloaded, as llama.cpp places them.
fn split(info: &GgufInfo, request: &PlanRequest, gpu_layers: u32) -> (Placement, Placement) {
    let layers = info.layer_bytes.len();
    let on_gpu_layers = (gpu_layers as usize).min(layers);
    let gpu_layer_bytes: u64 = info.layer_bytes[layers - on_gpu_layers..].iter().sum();
    let head_on_gpu = gpu_layers as usize > layers;
    let gpu_weights = gpu_layer_bytes + if head_on_gpu { info.output_bytes } else { 0 };
    let kv_per_layer = info.kv_bytes_per_token(request.kv_type) / info.block_count.max(1);
    let kv_tokens = request.ctx_per_session;
    let gpu_kv = kv_per_layer * on_gpu_layers as u64 * kv_tokens;
    let all_kv = info.kv_bytes_per_token(request.kv_type) * kv_tokens;
    let batch = u64::from(request.n_batch.max(1))
        .min(kv_tokens.max(1) * u64::from(request.sessions.max(1)));
    let ram = Placement {
        weights: info.weights_bytes.saturating_sub(gpu_weights),
        kv_per_session: all_kv - gpu_kv,
        compute: touched_compute_bytes(info, batch, request.sessions),
        runtime: RUNTIME_BYTES + info.vocab_size * VOCAB_ENTRY_BYTES,
    };
    let gpu = if gpu_layers == 0 {
        Placement::default()
    } else {
        Placement {
            weights: gpu_weights,
            kv_per_session: gpu_kv,
            compute: reserved_compute_bytes(info, batch),
            runtime: 0,
        }
    };
    (ram, gpu)
}

/// Compute and output buffer bytes a CPU run touches: the activations of a full batch
/// and one row of logits per session (rein asks for one output per sequence).
fn touched_compute_bytes(info: &GgufInfo, batch: u64, sessions: u32) -> u64 {
    activation_bytes(info, batch) + 4 * info.vocab_size * u64::from(sessions.max(1))
}

/// The compute buffer llama.cpp reserves on a GPU (allocated whole): activations of a
/// full batch plus logits for every token of it.
fn reserved_compute_bytes(info: &GgufInfo, batch: u64) -> u64 {
    activation_bytes(info, batch) + 4 * info.vocab_size * batch
}

/// The largest activations alive at once for a batch of `batch` tokens: the
/// feed-forward's gate and up projections and the residual streams, in f32.
fn activation_bytes(info: &GgufInfo, batch: u64) -> u64 {
    4 * batch * (3 * info.feed_forward_length + 4 * info.embedding_length)
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const MIB: u64 = 1 << 20;

    /// Four layers of 100 MiB, a 50 MiB output head and 50 MiB of embeddings.
    fn model() -> GgufInfo {
        GgufInfo {
            path: PathBuf::from("m.gguf"),
            file_size: 500 * MIB,
            architecture: "llama".into(),
            name: None,
            parameter_count: 1,
            tensor_count: 1,
            file_type: "Q4_K_M".into(),
            context_length: Some(8192),
            block_count: 4,
            head_count: 8,
            head_count_kv: 2,
            embedding_length: 512,
            key_length: 64,
            value_length: 64,
            weights_bytes: 500 * MIB,
            layer_bytes: vec![100 * MIB; 4],
            output_bytes: 50 * MIB,
            matrix_bytes_by_type: [
                ("Q4_K".to_string(), 300 * MIB),
                ("Q6_K".to_string(), 150 * MIB),
            ]
            .into_iter()
            .collect(),
            vocab_size: 32_000,
            feed_forward_length: 1536,
            chat_template: None,
        }
    }

    fn ram(bytes: u64) -> Machine {
        Machine {
            ram: Some(bytes),
            ..Machine::default()
        }
    }

    fn gpu(free: u64) -> Machine {
        Machine {
            ram: Some(64 << 30),
            gpus: vec![GpuMemory {
                name: "test".into(),
                free,
                total: free,
            }],
            repacked_types: Vec::new(),
        }
    }

    #[test]
    fn counts_the_sessions_that_fit_in_ninety_percent_of_free_ram() {
        let info = model();
        let one = plan_memory(&info, PlanRequest::new(4096, 1), &ram(u64::MAX / 2));
        // 4 layers × (2 × 128 values × 2 bytes) per token, f16.
        assert_eq!(one.ram.kv_per_session, 4 * 2 * 128 * 2 * 4096);
        let free = (one.ram.total(5) + one.ram.kv_per_session / 2) / 9 * 10;
        let plan = plan_memory(&info, PlanRequest::new(4096, 8), &ram(free));
        assert_eq!(plan.sessions_fit, 5);
        assert!(!plan.fits());
        let refusal = plan.refusal().unwrap();
        assert!(refusal.contains("8 sessions of 4096 tokens"), "{refusal}");
        assert!(refusal.contains("5 would fit"), "{refusal}");
        assert!(plan_memory(&info, PlanRequest::new(4096, 5), &ram(free)).fits());
    }

    #[test]
    fn refuses_when_not_even_the_weights_fit() {
        let plan = plan_memory(&model(), PlanRequest::new(2048, 1), &ram(400 * MIB));
        assert_eq!(plan.sessions_fit, 0);
        assert!(plan
            .refusal()
            .unwrap()
            .contains("not even one session fits"));
    }

    #[test]
    fn unknown_free_memory_is_taken_as_enough() {
        let plan = plan_memory(&model(), PlanRequest::new(2048, 3), &Machine::default());
        assert!(plan.fits());
        assert_eq!(plan.refusal(), None);
    }

    #[test]
    fn a_quantized_kv_cache_fits_more_sessions() {
        let info = model();
        let free = 1024 * MIB;
        let f16 = plan_memory(&info, PlanRequest::new(32_768, 1), &ram(free));
        let mut request = PlanRequest::new(32_768, 1);
        request.kv_type = KvCacheType::Q4_0;
        let q4 = plan_memory(&info, request, &ram(free));
        assert!(q4.ram.kv_per_session * 3 < f16.ram.kv_per_session);
        assert!(q4.sessions_fit > f16.sessions_fit, "{q4:?} {f16:?}");
    }

    #[test]
    fn repacked_weight_types_count_twice_on_the_cpu() {
        let info = model();
        let mut machine = ram(u64::MAX / 2);
        let plain = plan_memory(&info, PlanRequest::new(1024, 1), &machine);
        machine.repacked_types = vec!["Q4_K".into(), "IQ4_NL".into()];
        let repacked = plan_memory(&info, PlanRequest::new(1024, 1), &machine);
        assert_eq!(repacked.ram.weights - plain.ram.weights, 300 * MIB);
    }

    #[test]
    fn no_layers_go_to_a_gpu_that_is_not_there() {
        let mut request = PlanRequest::new(1024, 1);
        request.gpu_layers = GpuLayers::Fixed(99);
        let plan = plan_memory(&model(), request, &ram(u64::MAX / 2));
        assert_eq!(plan.gpu_layers, 0);
        assert_eq!(plan.gpu, Placement::default());
        assert_eq!(plan.ram.weights, 500 * MIB);
    }

    #[test]
    fn auto_offloads_as_many_layers_as_the_gpu_holds() {
        let info = model();
        let mut request = PlanRequest::new(1024, 1);
        request.gpu_layers = GpuLayers::Auto;
        let everything = plan_memory(&info, request, &gpu(80 << 30));
        assert_eq!(everything.gpu_layers, 5);
        assert_eq!(everything.gpu.weights, 450 * MIB);
        assert_eq!(everything.ram.weights, 50 * MIB);
        assert_eq!(everything.ram.kv_per_session, 0);

        // Room for two layers and their share of the rest, not three.
        let compute = everything.gpu.compute;
        let kv_layer = everything.gpu.kv_per_session / 4;
        let two = 200 * MIB + 2 * kv_layer + compute + MIB;
        let plan = plan_memory(&info, request, &gpu(two / 9 * 10));
        assert_eq!(plan.gpu_layers, 2);
        assert_eq!(plan.gpu.weights, 200 * MIB);
        assert_eq!(plan.ram.weights, 300 * MIB);
        assert_eq!(plan.ram.kv_per_session, 2 * kv_layer);

        let fixed = PlanRequest {
            gpu_layers: GpuLayers::Fixed(3),
            ..request
        };
        assert_eq!(plan_memory(&info, fixed, &gpu(two / 9 * 10)).gpu_layers, 3);
        assert!(!plan_memory(&info, fixed, &gpu(two / 9 * 10)).fits());
    }

    #[test]
    fn gpu_layers_parse() {
        assert_eq!("auto".parse::<GpuLayers>().unwrap(), GpuLayers::Auto);
        assert_eq!("12".parse::<GpuLayers>().unwrap(), GpuLayers::Fixed(12));
        assert!("all".parse::<GpuLayers>().unwrap_err().contains("auto"));
        assert_eq!(GpuLayers::Fixed(3).to_string(), "3");
    }
}
