/// FoundationEssentials would bring this; a three-line helper keeps the module off Foundation.

extension String {
    public func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        guard let start = firstIndex(where: { !characters.contains($0) }) else { return "" }
        let end = lastIndex(where: { !characters.contains($0) })!
        return String(self[start...end])
    }
}
