//! The names of the built-in tools the loop itself refers to (and `finish`): a leaf
//! module, so the checks that name a tool need nothing else of the loop.

/// The tool that ends a run with an answer (offered by the `structured` profile).
pub const FINISH_TOOL: &str = "finish";

/// The built-in tool that writes a file (the output-file guard asks for it).
pub(crate) const WRITE_TOOL: &str = "write_file";

/// The built-in tool that reads a file (a plan to read one is answered with its call).
pub(crate) const READ_TOOL: &str = "read_file";

/// The built-in tool that changes part of a file.
pub(crate) const EDIT_TOOL: &str = "edit_file";

/// The built-in tool that searches file contents and names.
pub(crate) const SEARCH_TOOL: &str = "search";

/// The built-in tool that lists a directory.
pub(crate) const LIST_TOOL: &str = "list_dir";

/// The built-in shell.
pub(crate) const SHELL_TOOL: &str = "shell";

/// The built-in tool that counts, sums and picks records of a data file (offered
/// unless the `query_data` setting is off).
pub(crate) const QUERY_DATA_TOOL: &str = "query_data";

/// The built-in tool that replaces a text in every file under a path (offered unless
/// the `replace_in_files` setting is off).
pub(crate) const REPLACE_TOOL: &str = "replace_in_files";
