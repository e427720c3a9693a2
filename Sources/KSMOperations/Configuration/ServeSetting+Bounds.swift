import KSMService

extension ServeSetting {
    /// A range of numbers, with a unit for messages.
    package struct NumberBounds: Sendable {
        package var lower: Double
        /// False: the lower bound itself is refused ("more than 0").
        package var lowerIncluded: Bool
        package var upper: Double
        package var unit: String

        package func contains(_ value: Double) -> Bool {
            value.isFinite && (lowerIncluded ? value >= lower : value > lower) && value <= upper
        }

        package var sentence: String {
            let low = lowerIncluded ? "from \(Self.format(lower))" : "more than \(Self.format(lower))"
            return "\(low) to \(Self.format(upper))\(unit.isEmpty ? "" : " \(unit)")"
        }

        static func format(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }

        static func share(_ lower: Double, included: Bool) -> NumberBounds {
            NumberBounds(lower: lower, lowerIncluded: included, upper: 0.5, unit: "of a batch")
        }
    }

    /// How a duration is written: a number of seconds (fractions allowed), or whole milliseconds
    /// for the settings whose key ends in `-ms`.
    package enum DurationUnit: Sendable, Equatable {
        case seconds, milliseconds
    }

    /// A range of durations, written in one unit; resolved values are `Duration`s.
    package struct DurationBounds: Sendable {
        package var unit: DurationUnit
        /// Lower and upper bounds in `unit`.
        package var numbers: NumberBounds

        package static func seconds(_ lower: Double, included: Bool = false, _ upper: Double) -> DurationBounds {
            DurationBounds(unit: .seconds, numbers: NumberBounds(lower: lower, lowerIncluded: included, upper: upper, unit: "seconds"))
        }

        package static func milliseconds(_ range: ClosedRange<Int>) -> DurationBounds {
            DurationBounds(
                unit: .milliseconds,
                numbers: NumberBounds(lower: Double(range.lowerBound), lowerIncluded: true, upper: Double(range.upperBound), unit: "milliseconds"))
        }

        var expectation: String {
            switch unit {
            case .seconds: "a number \(numbers.sentence)"
            case .milliseconds: "a whole number \(numbers.sentence)"
            }
        }

        /// The duration written as a number of `unit`s: `15` for 15 s, `0.5` for 500 ms.
        func format(_ duration: Duration) -> String {
            NumberBounds.format(number(duration))
        }

        func number(_ duration: Duration) -> Double {
            let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
            return unit == .seconds ? milliseconds / 1000 : milliseconds
        }

        /// The duration `value` units make, to the millisecond.
        func duration(_ value: Double) -> Duration {
            .milliseconds(Int64((unit == .seconds ? value * 1000 : value).rounded()))
        }
    }
}
