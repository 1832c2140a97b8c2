import Foundation

extension ObjectPredicate {
    /// The predicate that `predicate` (a Foundation `Predicate`, from `#Predicate`) states: the
    /// same SQL and the same in-memory evaluation as one built with ``Key``.
    ///
    /// ```swift
    /// let open = try ObjectPredicate(#Predicate<Task> { !$0.done && $0.priority >= 2 })
    /// ```
    ///
    /// Supported: `==`, `!=`, `<`, `<=`, `>`, `>=` between a declared property and a value
    /// (captured values and arithmetic on them are evaluated once) or between two declared
    /// properties (`$0.shipped > $0.due`, `$0.lines.count == $0.quantity`); `&&`, `||`, `!`; a Boolean
    /// property on its own; `contains` and `starts(with:)` on strings; `list.contains($0.p)`;
    /// ranges (`(1...3).contains($0.priority)`); optional chaining through to-one relationships
    /// (`$0.project?.name == "Home"`); comparing a to-one relationship with an object or `nil`;
    /// and, on to-many relationships, `count`, `isEmpty`, `contains(object)`,
    /// `contains(where:)`, `allSatisfy`, and `filter { … }.count` or `.isEmpty` (a `SUBQUERY`).
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` naming the expression that has no equivalent
    ///   (calling other methods, a computed or `@Transient` property).
    public init<T: DeclaredModel>(_ predicate: Predicate<T>) throws(AmbarError) {
        self = try PredicateCompilation.compile(predicate)
    }

    /// The predicate that `predicate` states over the models of another layer (`AmbarSwiftData`'s
    /// `PersistentModel`), by the models' property names.
    package init<T: _QueryableModel>(_ predicate: Predicate<T>) throws(AmbarError) {
        self = try PredicateCompilation.compile(predicate)
    }
}

extension ObjectSortDescriptor {
    /// The sort that `descriptor` (a Foundation `SortDescriptor` on a declared property) states.
    /// Strings sort by their Unicode scalars, as `.lexical` compares them.
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` when the key path is not a stored property
    ///   the class declares (to sort through a relationship, use
    ///   `Key<String>("project.name").sorted()`), or when a string comparator other than
    ///   `.lexical` asks for an order the store does not give.
    public init<T: DeclaredModel>(_ descriptor: SortDescriptor<T>) throws(AmbarError) {
        try self.init(compiling: descriptor)
    }

    /// The sort that `descriptor` states over the models of another layer (`AmbarSwiftData`'s
    /// `PersistentModel`), by the models' property names.
    package init<T: _QueryableModel>(_ descriptor: SortDescriptor<T>) throws(AmbarError) {
        try self.init(compiling: descriptor)
    }

    private init<T>(compiling descriptor: SortDescriptor<T>) throws(AmbarError) {
        guard let keyPath = descriptor.keyPath else {
            throw .invalidPredicate("a SortDescriptor without a key path cannot sort in a store query")
        }
        let key = try PredicateCompilation.propertyName(keyPath, on: T.self)
        if var comparator = descriptor.stringComparator {
            comparator.order = .forward
            guard comparator == .lexical else {
                throw .invalidPredicate(
                    "SortDescriptor(\\.\(key)) compares strings with \(comparator); a store query sorts strings by their Unicode scalars (.lexical). For case-insensitive order use Key<String>(\"\(key)\").sorted(options: .caseInsensitive)"
                )
            }
        }
        self.init(key: key, ascending: descriptor.order == .forward)
    }
}

extension FetchRequest where T: DeclaredModel {
    /// A request for the objects of `T` that `predicate` (from `#Predicate`) matches, in the
    /// order of `sortBy` (Foundation `SortDescriptor`s on declared properties), as SwiftData's
    /// `FetchDescriptor` takes them.
    ///
    /// ```swift
    /// let request = try FetchRequest<Task>(
    ///     predicate: #Predicate { !$0.done },
    ///     sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)])
    /// let open = try context.fetch(request)
    /// ```
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for an expression or a key path a store
    ///   query cannot state (see ``ObjectPredicate/init(_:)``).
    public init(predicate: Predicate<T>?, sortBy: [SortDescriptor<T>] = []) throws(AmbarError) {
        var sorts: [ObjectSortDescriptor] = []
        for descriptor in sortBy { sorts.append(try ObjectSortDescriptor(descriptor)) }
        self.init(predicate: try predicate.map { p throws(AmbarError) in try ObjectPredicate(p) }, sortDescriptors: sorts)
    }

    /// A request for every object of `T`, in the order of `sortBy` (Foundation
    /// `SortDescriptor`s on declared properties).
    ///
    /// - Throws: ``AmbarError/invalidPredicate(_:)`` for a key path a store query cannot sort by
    ///   (see ``ObjectSortDescriptor/init(_:)``).
    public init(sortBy: [SortDescriptor<T>]) throws(AmbarError) {
        try self.init(predicate: nil, sortBy: sortBy)
    }
}
