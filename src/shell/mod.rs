//! Placeholder shell splitter (replaced by the full splitter of issue 4): splits on
//! `&& || ; | &` and newlines outside quotes and drops leading `VAR=val` words.

/// One simple command.
#[derive(Debug, Clone)]
pub struct Segment {
    /// Words after quote removal.
    pub argv: Vec<String>,
    /// Normalised text.
    pub text: String,
}

/// The result of splitting.
#[derive(Debug, Clone)]
pub struct Split {
    /// Simple commands in source order.
    pub segments: Vec<Segment>,
    /// False when the input could not be fully parsed.
    pub complete: bool,
}

/// Split `command` into simple commands.
#[must_use]
pub fn split(command: &str) -> Split {
    let mut segments = Vec::new();
    let mut word = String::new();
    let mut argv: Vec<String> = Vec::new();
    let mut quote: Option<char> = None;
    let mut push_seg = |argv: &mut Vec<String>| {
        let words: Vec<String> = argv
            .drain(..)
            .skip_while(|w| w.contains('=') && !w.starts_with('='))
            .collect();
        if !words.is_empty() {
            segments.push(Segment {
                text: words.join(" "),
                argv: words,
            });
        }
    };
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => quote = Some(c),
                ' ' | '\t' => {
                    if !word.is_empty() {
                        argv.push(std::mem::take(&mut word));
                    }
                }
                ';' | '&' | '|' | '\n' => {
                    if !word.is_empty() {
                        argv.push(std::mem::take(&mut word));
                    }
                    push_seg(&mut argv);
                }
                _ => word.push(c),
            },
        }
    }
    if !word.is_empty() {
        argv.push(word);
    }
    push_seg(&mut argv);
    Split {
        segments,
        complete: quote.is_none(),
    }
}
