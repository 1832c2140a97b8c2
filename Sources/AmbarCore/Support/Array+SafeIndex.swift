extension Array {
    /// The element at `index`, or nil when the array has none there.
    package subscript(safe index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
