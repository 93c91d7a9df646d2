//! The built-in tools and the helpers each of them needs.

mod binary;
mod edit_file;
mod edit_hints;
mod enclosing;
mod failure_source;
mod list_dir;
mod missing_paths;
mod open_regular;
mod query_conditions;
mod query_data;
mod read_file;
mod read_window;
mod records;
mod replace_in_files;
mod search;
mod search_copy;
mod search_engine;
mod search_probes;
mod shell;
mod shell_env;
mod shell_output;
mod shell_process;
mod spec;
#[cfg(test)]
mod test_files;
mod verification;
mod word_lines;
mod workspace_files;
mod write_file;

pub use edit_file::EditFile;
pub use list_dir::ListDir;
pub use query_data::QueryData;
pub use read_file::ReadFile;
pub use replace_in_files::ReplaceInFiles;
pub use search::Search;
pub use shell::Shell;
pub use word_lines::word_lines;
pub use write_file::WriteFile;
