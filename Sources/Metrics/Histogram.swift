/// Counts of observations by upper bound, as a Prometheus histogram.
public struct Histogram: Sendable {
    public let bounds: [Double]
    /// Per bound, then +Inf; not cumulative.
    private var counts: [UInt64]
    private var sum = 0.0

    public init(bounds: [Double]) {
        self.bounds = bounds
        counts = [UInt64](repeating: 0, count: bounds.count + 1)
    }

    public mutating func observe(_ value: Double) {
        counts[bounds.firstIndex { value <= $0 } ?? bounds.count] += 1
        sum += value
    }

    /// `name_bucket{labels le=…}`, `name_sum` and `name_count`; `labels` ends with a comma when
    /// not empty.
    public func write(_ name: String, labels: String, to text: inout String) {
        var cumulative: UInt64 = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counts[index]
            text += "\(name)_bucket{\(labels)le=\"\(bound)\"} \(cumulative)\n"
        }
        let total = cumulative + counts[bounds.count]
        text += "\(name)_bucket{\(labels)le=\"+Inf\"} \(total)\n"
        let plain = labels.isEmpty ? "" : "{\(labels.dropLast())}"
        text += "\(name)_sum\(plain) \(sum)\n\(name)_count\(plain) \(total)\n"
    }
}
