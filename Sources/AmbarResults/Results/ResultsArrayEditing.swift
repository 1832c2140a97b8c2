import AmbarCore

/// Edits of a results array in place: the elements move within the array's storage, never
/// copied, so a change to a few rows of a long list costs moves of memory, not a retain and a
/// release per row.
extension Array {
    /// Removes the elements at `indices` (ascending, each once, each within the array), keeping
    /// the order of the others. The elements after the first removed one move once.
    ///
    /// Indices that are not strictly ascending or not within the array are removed one by one
    /// instead, those outside it ignored: never a fault, whatever the input.
    mutating func remove(atAscending indices: [Int]) {
        let total = count
        guard let first = indices.first else { return }
        guard first >= 0, let last = indices.last, last < total,
            zip(indices, indices.dropFirst()).allSatisfy({ $0 < $1 })
        else {
            for index in Set(indices).sorted(by: >) where index >= 0 && index < count {
                remove(at: index)
            }
            return
        }
        withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            // Take the removed elements out, close the gaps from the front, and put the removed
            // ones in the freed tail, where `removeLast` releases them.
            var outgoing: [Element] = []
            outgoing.reserveCapacity(indices.count)
            for index in indices { outgoing.append((base + index).move()) }
            var kept = first
            for (n, index) in indices.enumerated() {
                let end = n + 1 < indices.count ? indices[n + 1] : total
                (base + kept).moveInitialize(from: base + index + 1, count: end - index - 1)
                kept += end - index - 1
            }
            for element in outgoing {
                (base + kept).initialize(to: element)
                kept += 1
            }
        }
        removeLast(indices.count)
    }

    /// Inserts `elements[i]` before the element now at `positions[i]`, for every `i` at once
    /// (positions ascending, each in `0...count`). Every element already in the array moves at
    /// most once.
    ///
    /// Positions that are not ascending or not within the array are inserted one by one instead,
    /// clamped into it: never a fault, whatever the input.
    mutating func insert(_ elements: [Element], atAscending positions: [Int]) {
        let existing = count
        let added = elements.count
        guard added > 0 else { return }
        guard positions.count == added,
            zip(positions, positions.dropFirst()).allSatisfy({ $0 <= $1 }),
            let first = positions.first, let last = positions.last, first >= 0, last <= existing
        else {
            for (offset, element) in elements.enumerated() {
                let position = offset < positions.count ? positions[offset] + offset : count
                insert(element, at: Swift.min(Swift.max(position, 0), count))
            }
            return
        }
        append(contentsOf: elements)
        withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            // Take the new elements out of the tail: from here the tail is uninitialized, and the
            // segments shift into it from the back, each new element going just before the
            // segment it precedes.
            var incoming: [Element] = []
            incoming.reserveCapacity(added)
            for offset in 0..<added { incoming.append((base + existing + offset).move()) }
            var end = existing
            for offset in stride(from: added - 1, through: 0, by: -1) {
                let position = positions[offset]
                (base + position + offset + 1).moveInitialize(from: base + position, count: end - position)
                (base + position + offset).initialize(to: incoming[offset])
                end = position
            }
        }
    }
}

extension Array where Element: ManagedObject {
    /// The indices of the objects marked with results pass `pass`, or invalidated, ascending.
    ///
    /// The rows are read without retaining them (the array holds them for the whole scan): in a
    /// long list the scan is one field read per row.
    func indices(touchedIn pass: UInt64) -> [Int] {
        var touched: [Int] = []
        withUnsafeBytes { bytes in
            let stride = MemoryLayout<Element>.stride
            for index in 0..<(bytes.count / stride) {
                let row = bytes.load(fromByteOffset: index * stride, as: Unmanaged<ManagedObject>.self)
                let isTouched = row._withUnsafeGuaranteedRef { $0.resultsPass == pass || $0.lifecycle == .invalidated }
                if isTouched { touched.append(index) }
            }
        }
        return touched
    }
}
