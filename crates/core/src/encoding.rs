//! Text encodings of blobs. Most source is UTF-8; the rest (UTF-16 with a byte-order mark,
//! Windows code pages, Big5, Shift-JIS, EUC-KR…) is detected — the BOM first, then `chardetng`,
//! the detector Firefox uses — and decoded with `encoding_rs`, so such files are indexed by
//! their text, with the same line numbers, instead of as lossy UTF-8 or "binary".

use encoding_rs::Encoding;
use std::borrow::Cow;

/// How much of a file the detector looks at: enough for a confident guess, bounded cost.
const SNIFF: usize = 64 * 1024;

/// The encoding of `content`, `None` for UTF-8 (with or without a BOM).
pub fn detect(content: &[u8]) -> Option<&'static Encoding> {
    if let Some((enc, _)) = Encoding::for_bom(content) {
        return (enc != encoding_rs::UTF_8).then_some(enc);
    }
    if std::str::from_utf8(content).is_ok() {
        return None;
    }
    // A cut inside a multi-byte sequence at the end of the sniffed part is still UTF-8.
    if content.len() > SNIFF && matches!(std::str::from_utf8(&content[..SNIFF]), Err(e) if e.error_len().is_none()) {
        return None;
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    let sniff = &content[..content.len().min(SNIFF)];
    det.feed(sniff, sniff.len() == content.len());
    let enc = det.guess(None, chardetng::Utf8Detection::Deny);
    (enc != encoding_rs::UTF_8).then_some(enc)
}

/// Whether the content starts with a UTF-16 byte-order mark (such text has NUL bytes, and
/// is not binary for that).
pub fn is_utf16(content: &[u8]) -> bool {
    matches!(Encoding::for_bom(content), Some((e, _)) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE)
}

/// The content as text, and the name of the encoding it was decoded from (`None`: UTF-8).
/// Bytes invalid in the detected encoding become U+FFFD; a BOM is dropped.
pub fn decode(content: &[u8]) -> (Cow<'_, str>, Option<&'static str>) {
    match detect(content) {
        None => {
            let body = content.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(content);
            (String::from_utf8_lossy(body), None)
        }
        Some(enc) => {
            let (text, used, _) = enc.decode(content);
            (text, Some(used.name()))
        }
    }
}

/// The content as text (see [`decode`]).
pub fn text(content: &[u8]) -> Cow<'_, str> {
    decode(content).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_through_and_loses_its_bom() {
        assert_eq!(decode("héllo\n".as_bytes()), (Cow::Borrowed("héllo\n"), None));
        assert_eq!(decode(b"\xEF\xBB\xBFfn main() {}\n").0, "fn main() {}\n");
    }

    #[test]
    fn utf16_with_bom_is_text() {
        let text = "def größe():\n    return 1\n";
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for u in text.encode_utf16() {
            le.extend(u.to_le_bytes());
            be.extend(u.to_be_bytes());
        }
        assert!(is_utf16(&le) && is_utf16(&be));
        assert_eq!(decode(&le), (Cow::Owned(text.to_string()), Some("UTF-16LE")));
        assert_eq!(decode(&be), (Cow::Owned(text.to_string()), Some("UTF-16BE")));
    }

    #[test]
    fn legacy_code_pages_are_detected() {
        let latin = "/* Gérer les données reçues: déjà traité, façade élégante */\nint résumé = 0; // à côté\n";
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(latin);
        assert_eq!(decode(&bytes), (Cow::Owned(latin.to_string()), Some("windows-1252")));
        let chinese = "// 這是一個處理網路連線的模組，負責讀取設定檔並建立資料庫連線。\n// 錯誤時會重新嘗試三次，然後回報給使用者。\nint main() { return 0; }\n";
        let (bytes, _, _) = encoding_rs::BIG5.encode(chinese);
        assert_eq!(decode(&bytes), (Cow::Owned(chinese.to_string()), Some("Big5")));
    }
}
