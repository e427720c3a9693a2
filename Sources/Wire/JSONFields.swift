/// Typed fields of one JSON object, each error naming the field by its dotted path.
///
/// Jobs, policies, entitlement claims, credentials files and Apple's JSON interface read their
/// documents through it, so every decoder says "which field, what was wrong" in the same words.
/// Every reader returns nil for an absent member; JSON `null` counts as absent too, so a writer can
/// say "no opinion".
package struct JSONFields: Sendable {
    package let members: [String: JSONValue]
    /// The dotted path of this object inside its document; "" for the root.
    package let prefix: String

    package init(_ members: [String: JSONValue], prefix: String = "") {
        self.members = members
        self.prefix = prefix
    }

    /// - Throws: ``JSONFieldError`` (field `prefix`) when `value` is not an object.
    package init(_ value: JSONValue, prefix: String = "") throws(JSONFieldError) {
        guard case .object(let members) = value else {
            throw JSONFieldError(field: prefix, reason: "must be a JSON object, not \(value.kind)")
        }
        self.init(members, prefix: prefix)
    }

    /// The member's dotted path, for error messages.
    package func path(_ key: String) -> String { prefix.isEmpty ? key : prefix + "." + key }

    /// The member, or nil when it is absent or `null`.
    package func value(_ key: String) -> JSONValue? {
        guard let v = members[key] else { return nil }
        if case .null = v { return nil }
        return v
    }

    /// An error for member `key` with the given reason.
    package func error(_ key: String, _ reason: String) -> JSONFieldError {
        JSONFieldError(field: path(key), reason: reason)
    }

    package func string(_ key: String) throws(JSONFieldError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw error(key, "must be a string, not \(v.kind)") }
        return s
    }

    package func bool(_ key: String) throws(JSONFieldError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw error(key, "must be true or false, not \(v.kind)") }
        return b
    }

    /// An integer inside `range`; `expected` replaces "an integer in a...b" in the error.
    package func integer(_ key: String, in range: ClosedRange<Int64>, expected: String? = nil) throws(JSONFieldError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard case .integer(let n) = v, range.contains(n) else {
            let description = expected ?? "an integer in \(range.lowerBound)...\(range.upperBound)"
            if case .integer(let n) = v { throw error(key, "must be \(description), got \(n)") }
            throw error(key, "must be \(description), not \(v.kind == "number" ? "a fraction" : v.kind)")
        }
        return n
    }

    /// A string that `make` turns into a value; `allowed` names the accepted spellings in the error.
    package func choice<T>(_ key: String, _ allowed: String, _ make: (String) -> T?) throws(JSONFieldError) -> T? {
        guard let v = value(key) else { return nil }
        guard case .string(let text) = v, let result = make(text) else {
            throw error(key, "must be one of \(allowed)")
        }
        return result
    }

    /// A nested object, read with its own path prefix.
    package func object(_ key: String) throws(JSONFieldError) -> JSONFields? {
        guard let v = value(key) else { return nil }
        guard case .object(let o) = v else { throw error(key, "must be an object, not \(v.kind)") }
        return JSONFields(o, prefix: path(key))
    }

    /// An array of any elements.
    package func array(_ key: String) throws(JSONFieldError) -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let elements) = v else { throw error(key, "must be an array, not \(v.kind)") }
        return elements
    }

    /// What `read` finds for `key`, or an error saying the field is missing.
    package func required<T>(_ key: String, _ read: (String) throws(JSONFieldError) -> T?) throws(JSONFieldError) -> T {
        guard let found = try read(key) else { throw error(key, "required field is missing") }
        return found
    }
}
