/// A set of property indexes (attribute or relationship positions in an entity layout), as bits.
///
/// An object records which of its properties changed since its last save in two of these. The
/// first 64 indexes live in one word inside the object, with no allocation and no hashing;
/// entities with more properties spill the rest into an array of words. Iteration is in
/// ascending order, so `sorted()` is already sorted.
struct PropertyIndexSet: Sequence, Hashable, Sendable {
    private var low: UInt64 = 0
    private var high: [UInt64] = []

    init() {}

    var isEmpty: Bool { low == 0 && high.allSatisfy { $0 == 0 } }

    func contains(_ index: Int) -> Bool {
        if index < 64 { return index >= 0 && low & (1 << UInt64(index)) != 0 }
        let word = index / 64 - 1
        return word < high.count && high[word] & (1 << UInt64(index % 64)) != 0
    }

    mutating func insert(_ index: Int) {
        if index < 64 {
            low |= 1 << UInt64(index)
            return
        }
        let word = index / 64 - 1
        if word >= high.count { high.append(contentsOf: repeatElement(0, count: word - high.count + 1)) }
        high[word] |= 1 << UInt64(index % 64)
    }

    mutating func removeAll() {
        low = 0
        if !high.isEmpty { high = [] }
    }

    func makeIterator() -> Iterator { Iterator(set: self) }

    /// Visits the set bits word by word, lowest first.
    struct Iterator: IteratorProtocol {
        let set: PropertyIndexSet
        var word: UInt64
        var wordIndex = 0

        init(set: PropertyIndexSet) {
            self.set = set
            self.word = set.low
        }

        mutating func next() -> Int? {
            while word == 0 {
                guard wordIndex < set.high.count else { return nil }
                word = set.high[wordIndex]
                wordIndex += 1
            }
            let bit = word.trailingZeroBitCount
            word &= word - 1
            return wordIndex * 64 + bit
        }
    }
}
