import Foundation

/// The path of `relative` (`docs/API.md`) in this repository, for tests that hold a document to
/// the code.
public func repositoryFile(_ relative: String) -> String {
    URL(fileURLWithPath: #filePath)  // Tests/TestSupport/RepositoryFiles.swift
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(relative).path
}
