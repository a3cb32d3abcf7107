// The web client's favicon.svg, compiled into the binary (no files to ship, no build step).
// Edit it here as the favicon.svg it is.

extension WebClient {
    /// `/favicon.svg`.
    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="2" y="7" width="28" height="18" rx="4" fill="#2457d6"/><circle cx="11" cy="28.5" r="1.5" fill="#2457d6"/><circle cx="16" cy="28.5" r="1.5" fill="#b9c0cd"/><circle cx="21" cy="28.5" r="1.5" fill="#b9c0cd"/></svg>
        """#
}
