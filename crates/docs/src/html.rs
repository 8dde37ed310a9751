//! An HTML page as structured Markdown: the main content only (navigation, headers, footers and
//! scripts dropped), headings kept with their anchors (`## Title {#id}`, so a hit can cite
//! `URL#id`), code blocks fenced with their language, tables as pipe tables, lists as lists.
//! Also what the crawler needs from the whole document: links, canonical URL, robots meta.
//!
//! Written over scraper's tree rather than with a generic converter because the anchors of
//! headings (on the heading, its section or a child link, depending on the site generator)
//! are what citations need, and generic converters drop them.

use scraper::{ElementRef, Html, Node, Selector};

/// What a page says.
#[derive(Debug, Default)]
pub struct Extracted {
    pub title: String,
    /// `<link rel="canonical">`, as written.
    pub canonical: Option<String>,
    /// Every `<a href>` of the document, as written (navigation included: the crawl needs it).
    pub links: Vec<String>,
    /// `<meta name="robots">` says noindex / nofollow.
    pub noindex: bool,
    pub nofollow: bool,
    pub markdown: String,
}

const SKIP: &[&str] = &[
    "script", "style", "noscript", "nav", "header", "footer", "aside", "form", "button", "svg", "template", "iframe",
    "select", "input", "textarea", "head", "title", "link", "meta",
];

const BLOCK: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "details",
    "summary",
    "hr",
    "address",
    "center",
    "body",
    "html",
    "li",
];

/// Element levels the structured walk takes (real pages nest a few dozen deep).
const MAX_NESTING: usize = 256;

/// How deep nodes nest under `root`, counted without recursion.
fn nesting(root: ElementRef) -> usize {
    let top = *root;
    let (mut node, mut depth, mut deepest) = (top, 0usize, 0usize);
    loop {
        if let Some(child) = node.first_child() {
            node = child;
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if node == top {
                return deepest;
            }
            if let Some(next) = node.next_sibling() {
                node = next;
                break;
            }
            match node.parent() {
                Some(p) => {
                    node = p;
                    depth -= 1;
                }
                None => return deepest,
            }
        }
    }
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("static selector")
}

pub fn extract(html: &str) -> Extracted {
    let doc = Html::parse_document(html);
    let mut out = Extracted {
        title: doc.select(&sel("title")).next().map(|t| collapse(&t.text().collect::<String>())).unwrap_or_default(),
        ..Default::default()
    };
    out.canonical = doc
        .select(&sel("link[rel~=canonical]"))
        .find_map(|l| l.value().attr("href"))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    for m in doc.select(&sel("meta[name]")) {
        if m.value().attr("name").is_some_and(|n| n.eq_ignore_ascii_case("robots")) {
            let c = m.value().attr("content").unwrap_or("").to_ascii_lowercase();
            out.noindex |= c.contains("noindex") || c.contains("none");
            out.nofollow |= c.contains("nofollow") || c.contains("none");
        }
    }
    out.links = doc
        .select(&sel("a[href]"))
        .filter_map(|a| a.value().attr("href"))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect();
    // The main content when the page marks it, else the body.
    let root = ["main", "article", "[role=main]", "#content", "body"]
        .iter()
        .find_map(|s| doc.select(&sel(s)).next())
        .unwrap_or_else(|| doc.root_element());
    if nesting(root) > MAX_NESTING {
        // The structured walk recurses per element level: a page nested this deep keeps its
        // text, as one paragraph per text node, without headings or tables.
        let lines: Vec<String> = root.text().map(collapse).filter(|t| !t.is_empty()).collect();
        out.markdown = format!("{}\n", lines.join("\n\n"));
    } else {
        let mut w = Writer::default();
        children(root, &mut w);
        out.markdown = w.finish();
    }
    if out.title.is_empty() {
        out.title = doc.select(&sel("h1")).next().map(|h| inline(h)).unwrap_or_default();
    }
    out
}

#[derive(Default)]
struct Writer {
    blocks: Vec<String>,
    para: String,
}

impl Writer {
    fn text(&mut self, t: &str) {
        if t.chars().all(char::is_whitespace) {
            if !t.is_empty() && !self.para.is_empty() && !self.para.ends_with([' ', '\n']) {
                self.para.push(' ');
            }
            return;
        }
        let starts_ws = t.starts_with(char::is_whitespace);
        if starts_ws && !self.para.is_empty() && !self.para.ends_with([' ', '\n']) {
            self.para.push(' ');
        }
        self.para.push_str(&collapse(t));
        if t.ends_with(char::is_whitespace) {
            self.para.push(' ');
        }
    }

    fn flush(&mut self) {
        let p = self.para.trim();
        if !p.is_empty() {
            let p = p.lines().map(str::trim).collect::<Vec<_>>().join("\n");
            self.blocks.push(p);
        }
        self.para.clear();
    }

    fn block(&mut self, b: String) {
        self.flush();
        if !b.trim().is_empty() {
            self.blocks.push(b);
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        let mut s = self.blocks.join("\n\n");
        s.push('\n');
        s
    }
}

fn collapse(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn children(el: ElementRef, w: &mut Writer) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => w.text(t),
            Node::Element(_) => {
                if let Some(e) = ElementRef::wrap(child) {
                    element(e, w);
                }
            }
            _ => {}
        }
    }
}

fn hidden(e: &ElementRef) -> bool {
    let v = e.value();
    v.attr("hidden").is_some()
        || v.attr("aria-hidden") == Some("true")
        || v.attr("style").is_some_and(|s| s.replace(' ', "").contains("display:none"))
}

fn element(e: ElementRef, w: &mut Writer) {
    let name = e.value().name();
    if SKIP.contains(&name) || hidden(&e) {
        return;
    }
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            let level = (name.as_bytes()[1] - b'0') as usize;
            let title = inline(e);
            if !title.is_empty() {
                let anchor = heading_anchor(&e).map(|a| format!(" {{#{a}}}")).unwrap_or_default();
                w.block(format!("{} {title}{anchor}", "#".repeat(level)));
            }
        }
        "pre" => {
            let code: String = e.text().collect();
            let lang = code_language(&e).unwrap_or_default();
            let fence = if code.contains("```") { "~~~~" } else { "```" };
            w.block(format!("{fence}{lang}\n{}\n{fence}", code.trim_end_matches('\n')));
        }
        "table" => w.block(table(e)),
        "ul" | "ol" => w.block(list(e, name == "ol")),
        "blockquote" => {
            let mut sub = Writer::default();
            children(e, &mut sub);
            let body = sub.finish();
            w.block(
                body.trim_end()
                    .lines()
                    .map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") })
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
        "br" => w.para.push('\n'),
        "code" | "kbd" | "samp" => {
            let t = collapse(&e.text().collect::<String>());
            if !t.is_empty() {
                if !w.para.is_empty() && !w.para.ends_with([' ', '\n', '(']) {
                    w.para.push(' ');
                }
                w.para.push_str(&format!("`{t}`"));
            }
        }
        "img" => {}
        _ if BLOCK.contains(&name) => {
            w.flush();
            children(e, w);
            w.flush();
        }
        _ => children(e, w),
    }
}

/// Text of an element on one line (headings, table cells), without permalink marks.
fn inline(e: ElementRef) -> String {
    let mut s = String::new();
    fn walk(e: ElementRef, s: &mut String) {
        for child in e.children() {
            match child.value() {
                Node::Text(t) => {
                    s.push_str(t);
                }
                Node::Element(_) => {
                    let Some(c) = ElementRef::wrap(child) else { continue };
                    if SKIP.contains(&c.value().name()) || hidden(&c) || permalink(&c) {
                        continue;
                    }
                    if c.value().name() == "br" {
                        s.push(' ');
                    }
                    walk(c, s);
                }
                _ => {}
            }
        }
    }
    walk(e, &mut s);
    collapse(&s)
}

/// A heading's own permalink (`¶`, `#`, an empty link to its own anchor).
fn permalink(e: &ElementRef) -> bool {
    e.value().name() == "a"
        && e.value().attr("href").is_some_and(|h| h.starts_with('#'))
        && e.text().collect::<String>().trim().chars().filter(|c| !c.is_whitespace() && *c != '\u{200b}').count() <= 1
}

/// Where a heading's anchor is: its own id, a child anchor's, or (Sphinx) its section's.
fn heading_anchor(e: &ElementRef) -> Option<String> {
    let clean = |s: &str| -> Option<String> {
        let s = s.trim();
        (!s.is_empty() && s.len() <= 200 && !s.contains(char::is_whitespace)).then(|| s.to_string())
    };
    if let Some(id) = e.value().attr("id").and_then(clean) {
        return Some(id);
    }
    for d in e.descendants().filter_map(ElementRef::wrap) {
        if let Some(id) = d
            .value()
            .attr("id")
            .or_else(|| (d.value().name() == "a").then(|| d.value().attr("name")).flatten())
            .and_then(clean)
        {
            return Some(id);
        }
        if permalink(&d)
            && let Some(h) = d.value().attr("href").and_then(|h| h.strip_prefix('#')).and_then(clean)
        {
            return Some(h);
        }
    }
    let parent = e.parent().and_then(ElementRef::wrap)?;
    let first = parent.children().filter_map(ElementRef::wrap).next()?;
    if matches!(parent.value().name(), "section" | "div") && first.id() == e.id() {
        return parent.value().attr("id").and_then(clean);
    }
    None
}

/// `language-rust`, `lang-py`, `highlight-python` on the block, its code or its wrapper.
fn code_language(e: &ElementRef) -> Option<String> {
    let from = |el: &ElementRef| -> Option<String> {
        el.value().classes().find_map(|c| {
            ["language-", "lang-", "highlight-", "sourceCode "]
                .iter()
                .find_map(|p| c.strip_prefix(p))
                .filter(|l| {
                    !l.is_empty()
                        && l.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'#' | b'_'))
                })
                .map(str::to_string)
        })
    };
    from(e)
        .or_else(|| {
            e.children().filter_map(ElementRef::wrap).find(|c| c.value().name() == "code").and_then(|c| from(&c))
        })
        .or_else(|| e.parent().and_then(ElementRef::wrap).and_then(|p| from(&p)))
        .or_else(|| e.parent().and_then(|p| p.parent()).and_then(ElementRef::wrap).and_then(|p| from(&p)))
        .filter(|l| l != "default" && l != "none" && l != "text")
}

fn table(e: ElementRef) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for tr in e.descendants().filter_map(ElementRef::wrap).filter(|d| d.value().name() == "tr") {
        // Cells of this row only, not of a nested table.
        let cells: Vec<String> = tr
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|c| matches!(c.value().name(), "td" | "th"))
            .map(|c| inline(c).replace('|', "\\|"))
            .collect();
        if !cells.is_empty() {
            rows.push(cells);
        }
    }
    let Some(width) = rows.iter().map(Vec::len).max() else { return String::new() };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut cells = r.clone();
        cells.resize(width, String::new());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if i == 0 {
            out.push_str(&format!("|{}\n", " --- |".repeat(width)));
        }
    }
    out.trim_end().to_string()
}

fn list(e: ElementRef, ordered: bool) -> String {
    let mut out = Vec::new();
    let mut n = 0;
    for li in e.children().filter_map(ElementRef::wrap).filter(|c| c.value().name() == "li") {
        n += 1;
        let mut sub = Writer::default();
        children(li, &mut sub);
        let body = sub.finish();
        let marker = if ordered { format!("{n}. ") } else { "- ".to_string() };
        let pad = " ".repeat(marker.len());
        let mut lines = body.trim_end().lines();
        let first = lines.next().unwrap_or("");
        let mut item = format!("{marker}{first}");
        for l in lines {
            item.push('\n');
            if !l.is_empty() {
                item.push_str(&pad);
                item.push_str(l);
            }
        }
        out.push(item);
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_content_as_markdown_with_anchors_code_and_tables() {
        let page = r##"<!doctype html><html><head><title>Retries | Docs</title>
            <link rel="canonical" href="/guide/retries"><meta name="robots" content="nofollow"></head>
            <body><nav><a href="/other">Other page</a> menu menu</nav>
            <main>
              <h1 id="retries">Retries<a class="headerlink" href="#retries">¶</a></h1>
              <p>Requests are <em>retried</em> with
                 exponential backoff.</p>
              <section id="configuring-backoff"><h2>Configuring backoff</h2>
                <p>Set <code>max_retries</code> in the client.</p>
                <div class="highlight-python"><pre>client = Client(max_retries=3)
print(client)</pre></div>
                <table><tr><th>Name</th><th>Default</th></tr><tr><td>max_retries</td><td>3</td></tr></table>
                <ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul>
              </section>
              <script>var x = 1;</script>
            </main><footer>copyright</footer></body></html>"##;
        let x = extract(page);
        assert_eq!(x.title, "Retries | Docs");
        assert_eq!(x.canonical.as_deref(), Some("/guide/retries"));
        assert!(x.nofollow && !x.noindex);
        assert!(x.links.contains(&"/other".to_string()));
        let md = &x.markdown;
        assert!(md.starts_with("# Retries {#retries}\n\nRequests are retried with exponential backoff."), "{md}");
        assert!(md.contains("## Configuring backoff {#configuring-backoff}"), "{md}");
        assert!(md.contains("Set `max_retries` in the client."), "{md}");
        assert!(md.contains("```python\nclient = Client(max_retries=3)\nprint(client)\n```"), "{md}");
        assert!(md.contains("| Name | Default |\n| --- | --- |\n| max_retries | 3 |"), "{md}");
        assert!(md.contains("- first\n- second\n\n  - nested") || md.contains("- first\n- second\n  - nested"), "{md}");
        for gone in ["menu", "copyright", "var x", "¶"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn broken_html_still_gives_text() {
        let x = extract("<p>unclosed <b>bold <div>and <h2>Heading</p></div> tail");
        assert!(x.markdown.contains("unclosed bold"), "{}", x.markdown);
        assert!(x.markdown.contains("## Heading"), "{}", x.markdown);
    }
}
