import Foundation

/// One token of an `NSPredicate` format string, with the offset (in Unicode scalars) where it
/// starts, for error messages that point at it.
struct FormatToken: Sendable {
    enum Kind: Sendable, Equatable {
        /// A name: a key path component (`name`, `@count`, `#order`) or a keyword (`AND`, `IN`…).
        case identifier(String, escaped: Bool)
        case string(String)
        case integer(Int64)
        case double(Double)
        /// `%@`, `%K`, `%d`…: the conversion character(s) after `%` (length modifiers dropped).
        case specifier(String)
        /// `$NAME`.
        case variable(String)
        /// Punctuation and operators: `( ) { } [ ] , .` `== = != <> < <= =< > >= => && || !`.
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: Int
}

/// Splits a format string into tokens.
struct PredicateFormatLexer {
    private let scalars: [Unicode.Scalar]
    private let format: String
    private var index = 0

    init(_ format: String) {
        self.format = format
        self.scalars = Array(format.unicodeScalars)
    }

    private func error(_ reason: String, at position: Int) -> AmbarError {
        .invalidPredicateFormat(format: format, position: position, reason: reason)
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    static func isNameStart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" }
    static func isNamePart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c.properties.numericType != nil || c == "_" }

    mutating func tokens() throws(AmbarError) -> [FormatToken] {
        var result: [FormatToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.kind == .end { return result }
        }
    }

    private mutating func next() throws(AmbarError) -> FormatToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return FormatToken(kind: .end, position: start) }
        func symbol(_ text: String) -> FormatToken {
            index += text.unicodeScalars.count
            return FormatToken(kind: .symbol(text), position: start)
        }
        switch c {
        case "\"", "'":
            return FormatToken(kind: .string(try quoted(c)), position: start)
        case "%":
            return FormatToken(kind: try specifier(), position: start)
        case "$":
            index += 1
            let name = identifierText()
            guard !name.isEmpty else { throw error("'$' must be followed by a variable name", at: start) }
            return FormatToken(kind: .variable(name), position: start)
        case "#":
            index += 1
            let name = identifierText()
            guard !name.isEmpty else { throw error("'#' must be followed by a name (it escapes a reserved word)", at: start) }
            return FormatToken(kind: .identifier(name, escaped: true), position: start)
        case "@":
            index += 1
            let name = identifierText()
            guard !name.isEmpty else { throw error("'@' must be followed by an operator name such as count or sum", at: start) }
            return FormatToken(kind: .identifier("@" + name, escaped: false), position: start)
        case "(", ")", "{", "}", "[", "]", ",":
            return symbol(String(c))
        case ".":
            if let d = peek(1), ("0"..."9").contains(d) { return try number() }
            return symbol(".")
        case "=":
            if peek(1) == "=" { return symbol("==") }
            if peek(1) == "<" { return symbol("=<") }
            if peek(1) == ">" { return symbol("=>") }
            return symbol("=")
        case "!":
            if peek(1) == "=" { return symbol("!=") }
            return symbol("!")
        case "<":
            if peek(1) == "=" { return symbol("<=") }
            if peek(1) == ">" { return symbol("<>") }
            return symbol("<")
        case ">":
            if peek(1) == "=" { return symbol(">=") }
            return symbol(">")
        case "&":
            guard peek(1) == "&" else { throw error("'&' must be '&&'", at: start) }
            return symbol("&&")
        case "|":
            guard peek(1) == "|" else { throw error("'|' must be '||'", at: start) }
            return symbol("||")
        case "-", "+":
            if let d = peek(1), ("0"..."9").contains(d) || d == "." { return try number() }
            throw error("arithmetic ('\(c)') is not supported in predicates; compute the value first and pass it as an argument", at: start)
        case "*", "/", "^":
            throw error("arithmetic ('\(c)') is not supported in predicates; compute the value first and pass it as an argument", at: start)
        default:
            if ("0"..."9").contains(c) { return try number() }
            if Self.isNameStart(c) { return FormatToken(kind: .identifier(identifierText(), escaped: false), position: start) }
            throw error("unexpected character '\(c)'", at: start)
        }
    }

    private mutating func identifierText() -> String {
        var text = ""
        while let c = peek(), Self.isNamePart(c) {
            text.unicodeScalars.append(c)
            index += 1
        }
        return text
    }

    private mutating func quoted(_ quote: Unicode.Scalar) throws(AmbarError) -> String {
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        while let c = peek() {
            index += 1
            if c == quote { return String(text) }
            guard c == "\\" else {
                text.append(c)
                continue
            }
            guard let e = peek() else { break }
            index += 1
            switch e {
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "0": text.append("\0")
            case "u":
                let hex = String(String.UnicodeScalarView(scalars[index..<min(index + 4, scalars.count)]))
                guard hex.count == 4, let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                    throw error("'\\u' must be followed by four hexadecimal digits", at: index - 2)
                }
                text.append(scalar)
                index += 4
            default: text.append(e)  // \" \' \\ and any other escaped character stand for themselves
            }
        }
        throw error("the string that starts here is not closed with \(quote)", at: start)
    }

    private mutating func number() throws(AmbarError) -> FormatToken {
        let start = index
        var text = ""
        if let sign = peek(), sign == "-" || sign == "+" {
            text.unicodeScalars.append(sign)
            index += 1
        }
        if peek() == "0", let base = peek(1), ["x", "X", "b", "B", "o", "O"].contains(base) {
            index += 2
            let radix = ["x": 16, "X": 16, "b": 2, "B": 2, "o": 8, "O": 8][Character(base)] ?? 10
            var digits = ""
            while let c = peek(), c.properties.isASCIIHexDigit {
                digits.unicodeScalars.append(c)
                index += 1
            }
            guard let value = Int64(digits, radix: radix) else { throw error("'\(text)0\(base)\(digits)' is not a number", at: start) }
            return FormatToken(kind: .integer(text == "-" ? -value : value), position: start)
        }
        var isDouble = false
        while let c = peek() {
            if ("0"..."9").contains(c) {
                text.unicodeScalars.append(c)
            } else if c == ".", !isDouble, let d = peek(1), ("0"..."9").contains(d) {
                isDouble = true
                text.unicodeScalars.append(c)
            } else if c == "e" || c == "E", let d = peek(1),
                ("0"..."9").contains(d) || ((d == "-" || d == "+") && peek(2).map { ("0"..."9").contains($0) } == true)
            {
                isDouble = true
                text.unicodeScalars.append(c)
                text.unicodeScalars.append(d)
                index += 1
            } else {
                break
            }
            index += 1
        }
        if !isDouble, let value = Int64(text) { return FormatToken(kind: .integer(value), position: start) }
        guard let value = Double(text), value.isFinite else { throw error("'\(text)' is not a number", at: start) }
        return FormatToken(kind: .double(value), position: start)
    }

    private mutating func specifier() throws(AmbarError) -> FormatToken.Kind {
        let start = index
        index += 1
        var modifiers = ""
        while let c = peek(), ["l", "h", "q", "z", "j", "t", "L"].contains(c) {
            modifiers.unicodeScalars.append(c)
            index += 1
        }
        guard let c = peek() else { throw error("'%' at the end of the format", at: start) }
        index += 1
        switch c {
        case "@", "K", "d", "i", "u", "f", "g", "e", "x", "X", "o", "c", "s", "D", "U", "O", "F", "E", "G": return .specifier(String(c))
        case "%": throw error("'%%' (a literal percent sign) can only appear inside a quoted string", at: start)
        default: throw error("'%\(modifiers)\(c)' is not a format specifier Ambar supports (%@, %K, %d, %i, %ld, %lld, %u, %f)", at: start)
        }
    }
}
