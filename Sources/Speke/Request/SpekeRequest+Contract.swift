/// The encryption contract (`ContentKeyUsageRuleList`). Sources: AWS SPEKE v2 "Encryption contract"
/// and "Standard payload components", and the negative cases of AWS's verification suite.
extension SpekeRequest {
    /// Reads the rules and checks the contract:
    /// - no `VideoFilter` or `AudioFilter` in any rule: "Missing CPIX encryption contract";
    /// - a rule without `kid` or `intendedTrackType`, naming no requested key, filtering on an
    ///   unknown period, without any filter, with an unreadable or inverted filter bound; the same
    ///   `intendedTrackType` twice in one period ("The value of ContentKeyUsageRule@intendedTrackType
    ///   shall be unique in an encryption contract"; per period, since a rotating request repeats
    ///   `VIDEO` once per period with a new KID); `ALL` beside other rules of its period, or `ALL`
    ///   without both a video and an audio filter: "Malformed encryption contract";
    /// - `ALL` where the tenant's policy forbids one key for audio and video: "Requested CPIX
    ///   encryption contract not supported".
    ///
    /// Filter semantics (`+`-joined names, pixel bounds) are the encryptor's: the key provider keys
    /// by KID and echoes the contract unchanged.
    static func usageRules(
        _ elements: [XMLElementValue], keys: [RequestedContentKey], periods: [ContentKeyPeriod], policy: ContractPolicy
    ) throws(SpekeError) -> [ContentKeyUsageRule] {
        let cpix = CPIXNamespace.cpix
        let hasFilter = elements.contains { !$0.elements(cpix, "VideoFilter").isEmpty || !$0.elements(cpix, "AudioFilter").isEmpty }
        guard hasFilter else { throw .missingContract }
        let kids = Set(keys.map(\.kid))
        let periodIDs = Set(periods.map(\.id))
        var rules: [ContentKeyUsageRule] = []
        for element in elements {
            guard let kidText = element[attribute: "kid"], let kid = KID(uuid: kidText), kids.contains(kid) else { throw .malformedContract }
            guard let trackType = element[attribute: "intendedTrackType"], !trackType.isEmpty else { throw .malformedContract }
            var filterPeriods: [String] = []
            for filter in element.elements(cpix, "KeyPeriodFilter") {
                guard let id = filter[attribute: "periodId"], periodIDs.contains(id) else { throw .malformedContract }
                filterPeriods.append(id)
            }
            var videoFilters: [VideoFilter] = []
            for filter in element.elements(cpix, "VideoFilter") {
                let video = VideoFilter(
                    minPixels: try number(filter, "minPixels"), maxPixels: try number(filter, "maxPixels"), hdr: try flag(filter, "hdr"),
                    minFps: try number(filter, "minFps"), maxFps: try number(filter, "maxFps"))
                try ordered(video.minPixels, video.maxPixels)
                try ordered(video.minFps, video.maxFps)
                videoFilters.append(video)
            }
            var audioFilters: [AudioFilter] = []
            for filter in element.elements(cpix, "AudioFilter") {
                let audio = AudioFilter(minChannels: try number(filter, "minChannels"), maxChannels: try number(filter, "maxChannels"))
                try ordered(audio.minChannels, audio.maxChannels)
                audioFilters.append(audio)
            }
            // "At least one <cpix:AudioFilter> or one <cpix:VideoFilter> element is required to be
            // present in a <cpix:ContentKeyUsageRule> element."
            guard !videoFilters.isEmpty || !audioFilters.isEmpty else { throw .malformedContract }
            rules.append(
                ContentKeyUsageRule(kid: kid, intendedTrackType: trackType, periodIDs: filterPeriods, videoFilters: videoFilters, audioFilters: audioFilters))
        }

        // Rules meet when they can apply to the same period: one without a period filter applies to all.
        func share(_ a: ContentKeyUsageRule, _ b: ContentKeyUsageRule) -> Bool {
            a.periodIDs.isEmpty || b.periodIDs.isEmpty || !Set(a.periodIDs).isDisjoint(with: b.periodIDs)
        }
        for (offset, rule) in rules.enumerated() {
            let isAll = rule.intendedTrackType == "ALL"
            if isAll, rule.videoFilters.isEmpty || rule.audioFilters.isEmpty { throw .malformedContract }
            for other in rules[(offset + 1)...] where share(rule, other) {
                if isAll || other.intendedTrackType == "ALL" || other.intendedTrackType == rule.intendedTrackType { throw .malformedContract }
            }
        }
        if !policy.allowsSharedAudioVideoKey, rules.contains(where: { $0.intendedTrackType == "ALL" }) { throw .contractNotSupported }
        return rules
    }

    private static func number(_ element: XMLElementValue, _ name: String) throws(SpekeError) -> UInt64? {
        guard let text = element[attribute: name] else { return nil }
        guard let value = UInt64(text.trimmingXMLSpace) else { throw .malformedContract }
        return value
    }

    private static func flag(_ element: XMLElementValue, _ name: String) throws(SpekeError) -> Bool? {
        switch element[attribute: name]?.trimmingXMLSpace {
        case nil: return nil
        case "true"?, "1"?: return true
        case "false"?, "0"?: return false
        default: throw .malformedContract
        }
    }

    private static func ordered(_ low: UInt64?, _ high: UInt64?) throws(SpekeError) {
        if let low, let high, low > high { throw .malformedContract }
    }
}
