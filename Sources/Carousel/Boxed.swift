/// An immutable value behind one reference: the large, rarely changed parts of a value type that
/// is copied often, so that a copy costs a pointer for them (docs/PERFORMANCE.md, memory per
/// carousel). Equal when the values are.
final class Boxed<Value: Sendable & Hashable>: Sendable, Hashable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }

    static func == (lhs: Boxed, rhs: Boxed) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }
}
