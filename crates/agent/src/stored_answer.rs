//! An answer that points to a file instead of giving itself (`full`): asked to "tell
//! me that customer's id and plan", the default model wrote `result.txt` and answered
//! "The customer's id and plan are now stored in \"result.txt\"." When the task asks
//! to be told (a question, "tell me") and for no file, and the answer names a file
//! this run wrote without what was written in it, the answer is held once with that
//! content.

use crate::memory::Memory;
use crate::result_text::excerpt;

/// Characters of the written content a note shows at most.
const CONTENT_SHOWN: usize = 400;

/// A file this run wrote, with what it wrote, that `answer` names in place of the
/// answer: the task asked for no file, the answer names the file, and none of the
/// written content's lines is in the answer.
pub(crate) fn stored_instead(
    answer: &str,
    task: &str,
    memory: &Memory,
) -> Option<(String, String)> {
    if memory.task_asks_for_a_file() || !asks_to_be_told(task) {
        return None;
    }
    memory
        .written_files
        .iter()
        .rev()
        .find(|(path, content)| {
            let name = path.rsplit('/').next().unwrap_or(path);
            let named = answer.contains(path.as_str()) || answer.contains(name);
            let told = content
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .any(|line| answer.contains(line));
            named && !told && !content.trim().is_empty()
        })
        .cloned()
}

/// Whether `task` asks for an answer: a question, or "tell me" / "give me".
pub(crate) fn asks_to_be_told(task: &str) -> bool {
    let lower = task.to_lowercase();
    lower.contains('?')
        || ["tell me", "tell us", "give me", "report "]
            .iter()
            .any(|p| lower.contains(p))
}

/// The note for an answer that points to `path` instead of giving what it holds.
pub(crate) fn stored_note(path: &str, content: &str) -> String {
    format!(
        "Not answered yet: the task asks you to tell it the answer, not to store it in a file. You wrote `{path}` with:\n{}\nReply with the answer itself (the values), in one or two sentences.",
        excerpt(content.trim(), CONTENT_SHOWN)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const TELL: &str = "Find the line and tell me that customer's id and plan.";

    fn wrote(path: &str, content: &str) -> Memory {
        Memory {
            written_files: vec![(path.into(), content.into())],
            ..Memory::default()
        }
    }

    #[test]
    fn an_answer_naming_a_written_file_without_its_content_is_held() {
        let memory = wrote("result.txt", "C-90412,enterprise");
        let answer = "The customer's id and plan are now stored in \"result.txt\".";
        assert_eq!(
            stored_instead(answer, TELL, &memory),
            Some(("result.txt".into(), "C-90412,enterprise".into()))
        );
        let note = stored_note("result.txt", "C-90412,enterprise");
        assert!(note.contains("You wrote `result.txt` with:\nC-90412,enterprise\n"));
    }

    #[test]
    fn an_answer_that_tells_or_a_task_that_asks_for_the_file_is_not() {
        let memory = wrote("out/result.txt", "C-90412,enterprise");
        assert!(stored_instead(
            "It is C-90412,enterprise (saved in result.txt).",
            TELL,
            &memory
        )
        .is_none());
        assert!(
            stored_instead("The id is C-90412 and the plan enterprise.", TELL, &memory).is_none()
        );
        let mut asked = wrote("result.txt", "C-90412,enterprise");
        asked.output_file = Some("result.txt".into());
        assert!(stored_instead("Stored in result.txt.", TELL, &asked).is_none());
        // A task that asks for no answer (a change): the file is the work.
        assert!(
            stored_instead("Stored in out/result.txt.", "Refactor the parser.", &memory).is_none()
        );
    }
}
