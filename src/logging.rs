//! Log setup: quiet by default, `-v` for more; llama.cpp's own log arrives through
//! tracing (target `llama-cpp-2`) one level quieter than rein's own.

use tracing_subscriber::EnvFilter;

/// Installs the stderr subscriber. `RUST_LOG` wins over `-v`.
pub fn init(verbosity: u8) {
    let default = match verbosity {
        0 => "warn,llama-cpp-2=error,llama_cpp_2=error",
        1 => "info,llama-cpp-2=warn,llama_cpp_2=warn",
        2 => "debug,llama-cpp-2=info,llama_cpp_2=info",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(verbosity > 1)
        .try_init();
}
