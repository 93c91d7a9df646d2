//! Batch scheduling: the calls of one reply split, in the model's order, into groups
//! that run concurrently. Reads share a group; a call touching a path written earlier
//! in the batch waits for that write; shell and unknown side effects run alone.

use std::path::PathBuf;

use rein_tools::Access;

/// Groups of call indexes; groups run one after another, the calls of a group at once.
pub fn plan(accesses: &[Access]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut reads: Vec<PathBuf> = Vec::new();
    let mut writes: Vec<PathBuf> = Vec::new();
    let mut previous_was_barrier = true; // nothing to join before the first call
    for (index, access) in accesses.iter().enumerate() {
        let joins = match access {
            Access::Barrier => false,
            Access::Read(paths) => {
                !previous_was_barrier && !paths.iter().any(|p| touches(&writes, p))
            }
            Access::Write(paths) => {
                !previous_was_barrier
                    && !paths
                        .iter()
                        .any(|p| touches(&writes, p) || touches(&reads, p))
            }
        };
        if !joins {
            groups.push(Vec::new());
            reads.clear();
            writes.clear();
        }
        if let Some(group) = groups.last_mut() {
            group.push(index);
        }
        previous_was_barrier = matches!(access, Access::Barrier);
        match access {
            Access::Read(paths) => reads.extend(paths.iter().cloned()),
            Access::Write(paths) => writes.extend(paths.iter().cloned()),
            Access::Barrier => {}
        }
    }
    groups
}

/// Whether `path` is, contains, or lies inside one of `paths`.
fn touches(paths: &[PathBuf], path: &PathBuf) -> bool {
    paths
        .iter()
        .any(|p| p == path || p.starts_with(path) || path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &str) -> Access {
        Access::Read(vec![PathBuf::from(p)])
    }
    fn write(p: &str) -> Access {
        Access::Write(vec![PathBuf::from(p)])
    }

    #[test]
    fn reads_run_together_and_writes_wait_for_their_paths() {
        assert_eq!(
            plan(&[read("/w/a"), read("/w/b"), read("/w/c")]),
            vec![vec![0, 1, 2]]
        );
        // write a, then read a: the read waits; read b can run beside the write.
        assert_eq!(
            plan(&[write("/w/a"), read("/w/b"), read("/w/a")]),
            vec![vec![0, 1], vec![2]]
        );
        // A read then a write of the same file: the write waits for the read.
        assert_eq!(plan(&[read("/w/a"), write("/w/a")]), vec![vec![0], vec![1]]);
        // A write inside a directory being listed waits.
        assert_eq!(
            plan(&[read("/w/d"), write("/w/d/x")]),
            vec![vec![0], vec![1]]
        );
        // Independent writes share a group.
        assert_eq!(plan(&[write("/w/a"), write("/w/b")]), vec![vec![0, 1]]);
    }

    #[test]
    fn barriers_run_alone_in_order() {
        assert_eq!(
            plan(&[read("/w/a"), Access::Barrier, read("/w/b"), Access::Barrier]),
            vec![vec![0], vec![1], vec![2], vec![3]]
        );
        assert_eq!(
            plan(&[Access::Barrier, Access::Barrier]),
            vec![vec![0], vec![1]]
        );
        assert!(plan(&[]).is_empty());
    }
}
