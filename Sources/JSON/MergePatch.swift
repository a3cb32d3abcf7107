extension JSONValue {
    /// `self` with a JSON Merge Patch (RFC 7396) applied: members of an object patch replace,
    /// recursively, the target's; a null member removes one; any other patch replaces the whole.
    public func merged(with patch: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var members: [String: JSONValue] = if case .object(let current) = self { current } else { [:] }
        for (name, change) in changes {
            if case .null = change {
                members[name] = nil
            } else {
                members[name] = (members[name] ?? .null).merged(with: change)
            }
        }
        return .object(members)
    }
}
