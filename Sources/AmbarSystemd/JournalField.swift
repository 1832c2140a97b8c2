/// Journal field names for swift-log metadata keys.
///
/// journald keeps only fields whose names are uppercase letters, digits and underscores, not
/// starting with an underscore, at most 64 characters (sd_journal_send(3)); anything else is
/// silently dropped. Metadata keys are therefore mapped: `objectID` → `AMBAR_OBJECT_ID`,
/// `peer` → `AMBAR_PEER`, `socket-path` → `AMBAR_SOCKET_PATH`.
public enum JournalField {
    /// The prefix of every field derived from metadata.
    public static let prefix = "AMBAR_"

    /// The journal field name for the metadata key `key`.
    public static func name(forMetadataKey key: String) -> String {
        var words: [String] = []
        var current = ""
        var previous: Character?
        for character in key {
            let isSeparator = !(character.isASCII && (character.isLetter || character.isNumber))
            if isSeparator {
                if !current.isEmpty {
                    words.append(current)
                    current = ""
                }
            } else {
                // A new word starts at an uppercase letter after a lowercase one or a digit ("objectID").
                if character.isUppercase, let previous, previous.isLowercase || previous.isNumber, !current.isEmpty {
                    words.append(current)
                    current = ""
                }
                current.append(character)
            }
            previous = character
        }
        if !current.isEmpty { words.append(current) }
        var name = words.map { $0.uppercased() }.joined(separator: "_")
        if name.hasPrefix(prefix.dropLast()) == false || name == String(prefix.dropLast()) {
            name = prefix + (name.isEmpty ? "FIELD" : name)
        }
        return String(name.prefix(64))
    }
}
