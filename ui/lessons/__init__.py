"""The lessons' content: the guided lessons' narration, the quizzes' questions, the quirks gallery, and the views they share."""
